"""cel-expr-python against cel-python: fidelity and speed on the real CRDs' rules.

    python bench/cel_engines.py [--crds ../shared/crds] [--verdicts ../shared/apiserver-verdicts]

Fidelity: does every rule of every CRD compile; do both engines give the same CEL findings on
the recorded API-server objects and on the manifests compiled from examples/? Where they
differ, which one agrees with the server's recorded verdict. Speed: cold import and engine
set-up (fresh processes), compile and evaluate per rule (in process, medians).
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _common import ENV, ROOT

sys.path.insert(0, str(ROOT))


def _fresh(code: str, runs: int = 7) -> float:
    """Median wall time of ``python -c code`` minus that of ``python -c pass``."""

    def median(source: str) -> float:
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", source], check=True, env=ENV, cwd=ROOT)
            times.append(time.perf_counter() - start)
        return statistics.median(times)

    return median(code) - median("pass")


def _rules(crds: Path) -> list[str]:
    from trainspec.check import iter_rules, load_crds

    return sorted({str(rule["rule"]) for crd in load_crds([crds]) for _, rule in iter_rules(crd.schema)})


def _objects(verdicts: Path) -> list[tuple[str, dict, str]]:
    import yaml

    out = []
    for path in sorted(verdicts.glob("*.yaml")):
        text = path.read_text()
        header = [line for line in text.splitlines() if line.startswith("# verdict:")]
        verdict = header[0].split(":", 1)[1].strip() if header else ""
        out.extend((path.name, doc, verdict) for doc in yaml.safe_load_all(text) if isinstance(doc, dict))
    return out


def _compiled() -> list[tuple[str, dict, str]]:
    from trainspec.compiler import pipeline
    from trainspec.compiler.emit import manifest_dicts

    result = pipeline.run([str(ROOT / "examples")], options=pipeline.Options(stop=pipeline.Stop.LOWER))
    return [
        (f"compiled {output.path}", data, "ACCEPTED")
        for output in result.outputs
        for data in manifest_dicts(output.objects)
    ]


def _findings(engine: object, registry: object, manifest: dict) -> list[tuple[str, str, str]]:
    from trainspec.check import check_cel

    crd = registry.lookup(manifest.get("apiVersion", ""), manifest.get("kind", ""))  # type: ignore[attr-defined]
    if crd is None:
        return []
    return sorted((d.code, d.path, d.message) for d in check_cel(manifest, crd.schema, engine=engine))


#: Rules where the two engines part, with the value and what the API server answers
#: (True: accepted, False: rejected), from the CEL spec as cel-go implements it.
PROBES = [
    ("has() of a field of an absent object is an error", "!has(self.metadata.namespace)", {}, False),
    ("errors are absorbed by ||", "self.a.b == 1 || true", {}, True),
    ("int compared with double", "self.n > 0.5", {"n": 1}, True),
    ("double printed as Go does", "string(self.r) == '2'", {"r": 2.0}, True),
    ("optional field selection", "self.?a.orValue(1) == 1", {}, True),
    ("cel.bind", "cel.bind(x, self.n, x > 0)", {"n": 1}, True),
    ("the IP/CIDR library", "isCIDR('10.0.0.0/8') && cidr('10.0.0.0/8').containsIP('10.1.2.3')", {}, True),
]


def _probes(engines: dict[str, object]) -> None:
    from trainspec.check import CelCompileError, CelEvalError

    print("semantics probes (expected = the API server's answer):")
    for label, rule, value, expected in PROBES:
        answers = []
        for name, engine in engines.items():
            try:
                answer: object = engine.evaluate(engine.compile(rule), {"self": value})  # type: ignore[attr-defined]
            except CelCompileError:
                answer = "does not compile"
            except CelEvalError as exc:
                answer = "not evaluable" if type(exc).__name__ == "CelUnsupportedError" else False
            mark = "ok" if answer == expected else "WRONG" if isinstance(answer, bool) else "n/a"
            answers.append(f"{name}: {answer} ({mark})")
        print(f"  {label:50} expected {expected!s:5}  " + "; ".join(answers))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--crds", type=Path, default=ROOT.parent / "shared" / "crds")
    parser.add_argument("--verdicts", type=Path, default=ROOT.parent / "shared" / "apiserver-verdicts")
    args = parser.parse_args()

    from trainspec.check import CelCompileError, load_crds
    from trainspec.check.cel.validations import make_engine

    engines = {"cel-expr-python": make_engine("cel-expr"), "cel-python": make_engine("celpy")}
    rules = _rules(args.crds)
    print(f"{len(rules)} distinct rules in {args.crds}")
    for name, engine in engines.items():
        failed = []
        for rule in rules:
            try:
                engine.compile(rule)
            except CelCompileError as exc:
                failed.append((rule, str(exc)))
        listed = "".join(f"\n    {r}: {e}" for r, e in failed)
        print(f"  {name}: {len(rules) - len(failed)}/{len(rules)} compile{listed}")

    registry = load_crds([args.crds])
    objects = _objects(args.verdicts) + _compiled()
    differ = 0
    for label, manifest, verdict in objects:
        found = {name: _findings(engine, registry, manifest) for name, engine in engines.items()}
        if len(set(map(tuple, found.values()))) > 1:
            differ += 1
            print(f"  differ on {label} (server: {verdict or 'n/a'}):")
            for name, items in found.items():
                print(f"    {name}: {items}")
    print(f"{len(objects)} objects ({len(objects) - differ} same CEL findings, {differ} differ)")

    _probes(engines)
    print("cold cost in a fresh process (minus python -c pass): the library alone, then through trainspec")
    for name, code in (
        (
            "cel-expr-python",
            ("from cel_expr_python import cel; cel.NewEnv(variables={'self': cel.Type.DYN}).compile('self > 1')"),
        ),
        ("cel-python", "import celpy; celpy.Environment().compile('self > 1')"),
        (
            "cel-expr-python",
            (
                "import trainspec.check; from trainspec.check.cel.validations import make_engine; "
                "make_engine('cel-expr').compile('self > 1')"
            ),
        ),
        (
            "cel-python",
            (
                "import trainspec.check; from trainspec.check.cel.validations import make_engine; "
                "make_engine('celpy').compile('self > 1')"
            ),
        ),
    ):
        print(f"  {name:16} {code[:60]:60} {_fresh(code) * 1000:6.1f} ms")

    sample = {
        "self": {
            "metadata": {"name": "x"},
            "replicatedJobs": [{"name": "node", "replicas": 1}] * 4,
            "levels": [{"nodeLabel": "a"}, {"nodeLabel": "kubernetes.io/hostname"}],
        }
    }
    for name in engines:
        engine = make_engine("cel-expr" if name == "cel-expr-python" else "celpy")
        start = time.perf_counter()
        programs = []
        for rule in rules:
            with contextlib.suppress(CelCompileError):
                programs.append(engine.compile(rule))
        compile_ms = (time.perf_counter() - start) * 1000 / len(rules)
        start = time.perf_counter()
        for program in programs * 20:
            with contextlib.suppress(Exception):
                engine.evaluate(program, sample)
        eval_us = (time.perf_counter() - start) * 1e6 / (len(programs) * 20)
        print(f"  {name:16} compile {compile_ms:6.3f} ms/rule   evaluate {eval_us:7.1f} us/rule")


if __name__ == "__main__":
    main()
