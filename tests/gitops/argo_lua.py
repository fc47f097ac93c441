"""A health script run the way Argo CD runs one from ``argocd-cm``, in a real Lua 5.1 (lupa).

What Argo CD does (argoproj/argo-cd util/lua/lua.go): a gopher-lua state (Lua 5.1) in which a
script configured in ``argocd-cm`` gets the base, table and package libraries and a restricted os,
and nothing else unless the admin sets ``resource.customizations.useOpenLibs.<group>_<kind>``; the
live object as the global ``obj``, converted as JSON is (maps -> tables, lists -> arrays from 1,
null -> nil, numbers -> Lua numbers); the chunk's return value, a table, read back as ``status`` and
``message``; a status outside the six Argo CD knows becomes Unknown. Here the os library is left out
as well (the scripts need none of it), which is stricter than Argo CD, never more lenient.
"""

from __future__ import annotations

from typing import Any

from lupa import lua51

STATUSES = frozenset({"Healthy", "Progressing", "Degraded", "Suspended", "Missing", "Unknown"})
#: Libraries a Lua 5.1 state opens that Argo CD does not give an argocd-cm script (plus lupa's own).
CLOSED = ("string", "math", "io", "os", "debug", "coroutine", "python")


def to_lua(runtime: Any, value: Any, path: str = "obj") -> Any:
    """``value`` (parsed YAML) as Argo CD hands it to Lua; anything JSON has not (a date, a non-string key) is refused."""
    if value is None or isinstance(value, (bool, str, int, float)):
        return value
    if isinstance(value, list):
        return runtime.table_from([to_lua(runtime, item, f"{path}[{i}]") for i, item in enumerate(value)])
    if isinstance(value, dict):
        table = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"{path}: key {key!r} is not a string, as every JSON key is")
            if item is not None:  # a JSON null is nil in Lua: the key is simply absent
                table[key] = to_lua(runtime, item, f"{path}.{key}")
        return runtime.table_from(table)
    raise TypeError(f"{path}: a {type(value).__name__} is not JSON (quote timestamps in the samples, as kubectl does)")


def sandbox() -> Any:
    """A Lua 5.1 state with only what Argo CD opens for an argocd-cm script."""
    runtime = lua51.LuaRuntime(register_eval=False, register_builtins=False)
    # String methods ("x"):find() come from the string type's metatable, which the string library sets.
    runtime.execute("debug.setmetatable('', nil)")
    lua_globals = runtime.globals()
    for name in CLOSED:
        lua_globals[name] = None
    return runtime


def run_health(script: str, obj: Any) -> tuple[str, str]:
    """(status, message) of ``script`` for the live object ``obj``; a Lua error raises ``lupa.LuaError``."""
    runtime = sandbox()
    runtime.globals().obj = to_lua(runtime, obj)
    result = runtime.execute(script)
    assert lua51.lua_type(result) == "table", f"a health script returns a table, not {result!r}"
    fields = dict(result.items())
    assert set(fields) <= {"status", "message"}, f"Argo CD reads only status and message: {sorted(fields)}"
    status, message = fields.get("status"), fields.get("message", "")
    assert isinstance(message, str), f"the message is a string, not {message!r}"
    if status not in STATUSES:  # what Argo CD makes of it
        return "Unknown", "Lua returned an invalid health status"
    return status, message
