"""``trainspec completion bash|zsh|fish``: a shell completion script generated from the parser.

The script is derived from the same argparse parser the command line uses, every command's
options included, so a new command or flag is completed without anyone editing a script.

Names that live in the cluster are completed when asked for: a JOB argument (``status``,
``logs``, ``cancel``) with the TrainJobs of the namespace, a ``-n/--namespace`` value with
namespaces and a ``--context`` value with the kubeconfig's contexts. The script asks
``trainspec __complete jobs|namespaces|contexts`` (:mod:`trainspec.cli.complete_names`), passing
the ``--kubeconfig``, ``--context`` and ``-n`` already typed; without a cluster it offers nothing.
Install::

    source <(trainspec completion bash)                      # ~/.bashrc
    trainspec completion zsh > "${fpath[1]}/_trainspec"       # or: source <(trainspec completion zsh)
    trainspec completion fish > ~/.config/fish/completions/trainspec.fish
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass

from trainspec.cli.main import COMPLETE_NAMES

SHELLS = ("bash", "zsh", "fish")
#: Option values that name files or directories (by metavar or flag); others get no completion.
PATHLIKE = re.compile(r"FILE|DIR|PATH|SPEC|^-o$|output|project|values|kubeconfig|env-file|cluster", re.I)
PROG = "trainspec"
#: Values completed with names from the cluster (``trainspec __complete KIND``), by argparse dest.
NAMED_OPTIONS = {"namespace": "namespaces", "context": "contexts"}
NAMED_POSITIONALS = {"job": "jobs"}
#: The options whose values go along to ``trainspec __complete`` (they pick the cluster and namespace).
CLUSTER_FLAGS = ("--kubeconfig", "--context", "-n", "--namespace")


@dataclass(frozen=True)
class Option:
    """One optional argument: its flags, whether it takes a value, and the value's choices."""

    flags: tuple[str, ...]
    help: str
    takes_value: bool
    choices: tuple[str, ...] = ()
    repeatable: bool = False
    metavar: str = "VALUE"
    #: ``namespaces`` or ``contexts``: the value is a name from the cluster (see the module docstring).
    names: str = ""

    @property
    def paths(self) -> bool:
        """Whether the value is a file or directory (completed as a path; other values are not)."""
        return bool(PATHLIKE.search(self.metavar) or any(PATHLIKE.search(f) for f in self.flags))


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    options: tuple[Option, ...]
    #: Whether the command takes positional arguments (completed as file names).
    positionals: bool
    #: The fixed values of its positional argument, if it has them (``completion bash``).
    positional_choices: tuple[str, ...] = ()
    #: ``jobs`` when its positional argument names a TrainJob (``status JOB``).
    positional_names: str = ""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("shell", choices=SHELLS, help="the shell to print the script for")


def run(args: argparse.Namespace) -> int:
    import sys

    sys.stdout.write(script(args.shell))
    return 0


def script(shell: str) -> str:
    """The completion script for ``shell`` (bash, zsh or fish)."""
    from trainspec.cli.main import build_parser

    top, commands = describe(build_parser())
    return {"bash": bash, "zsh": zsh, "fish": fish}[shell](top, commands)


# -- the parser, as data ---------------------------------------------------------------------------


def describe(parser: argparse.ArgumentParser) -> tuple[tuple[Option, ...], tuple[Command, ...]]:
    """The top-level options and every command (with its options) of ``parser``."""
    commands: list[Command] = []
    for action in parser._actions:  # argparse has no public walk over its actions
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, sub in action.choices.items():
                positionals = [a for a in sub._actions if not a.option_strings]
                choices = tuple(str(c) for a in positionals[:1] if a.choices for c in a.choices)
                commands.append(
                    Command(
                        name=name,
                        help=helps.get(name, ""),
                        options=_options(sub),
                        positionals=bool(positionals),
                        positional_choices=choices,
                        positional_names=NAMED_POSITIONALS.get(positionals[0].dest, "") if positionals else "",
                    )
                )
    return _options(parser), tuple(commands)


def _options(parser: argparse.ArgumentParser) -> tuple[Option, ...]:
    out = []
    for action in parser._actions:
        if not action.option_strings or action.help == argparse.SUPPRESS:
            continue
        takes_value = action.nargs != 0
        choices = tuple(str(c) for c in action.choices) if action.choices else ()
        metavar = action.metavar if isinstance(action.metavar, str) else action.dest.upper()
        out.append(
            Option(
                flags=tuple(action.option_strings),
                help=_one_line(action.help or ""),
                takes_value=takes_value,
                choices=choices,
                repeatable=isinstance(action, (argparse._AppendAction, argparse._CountAction)),
                metavar=metavar,
                names=NAMED_OPTIONS.get(action.dest, "") if takes_value else "",
            )
        )
    return tuple(out)


def _one_line(text: str) -> str:
    text = re.sub(r"\s+", " ", text.replace("%(default)s", "")).strip()
    return text.replace("%%", "%")


# -- bash ------------------------------------------------------------------------------------------


def _words(items: list[str]) -> str:
    return " ".join(items)


def bash(top: tuple[Option, ...], commands: tuple[Command, ...]) -> str:
    """A bash function ``_trainspec`` registered with ``complete -o default -F``."""
    flags = "|".join(CLUSTER_FLAGS)
    lines = [
        f"# bash completion for {PROG}; generated by `{PROG} completion bash`.",
        f"# Names from the cluster: `{PROG} {COMPLETE_NAMES} KIND` with the cluster options typed so far.",
        f"_{PROG}_names() {{",
        "    local i args=()",
        "    for ((i = 1; i + 1 < COMP_CWORD; i++)); do",
        f'        case "${{COMP_WORDS[i]}}" in {flags}) args+=("${{COMP_WORDS[i]}}" "${{COMP_WORDS[i+1]}}") ;; esac',
        "    done",
        "    # No file names instead when the cluster has none to offer.",
        "    compopt +o default 2>/dev/null",
        f'    COMPREPLY=($(compgen -W "$({PROG} {COMPLETE_NAMES} "$1" "${{args[@]}}" 2>/dev/null)" -- "$cur"))',
        "}",
        f"_{PROG}() {{",
        '    local cur="${COMP_WORDS[COMP_CWORD]}" prev="" cmd="" i',
        '    [ "$COMP_CWORD" -gt 0 ] && prev="${COMP_WORDS[COMP_CWORD-1]}"',
        "    COMPREPLY=()",
        "    for ((i = 1; i < COMP_CWORD; i++)); do",
        '        case "${COMP_WORDS[i]}" in -*) ;; *) cmd="${COMP_WORDS[i]}"; break ;; esac',
        "    done",
        '    case "$cmd" in',
        '    "")',
        '        if [[ "$cur" == -* ]]; then',
        f'            COMPREPLY=($(compgen -W "{_words([f for o in top for f in o.flags])}" -- "$cur"))',
        "        else",
        f'            COMPREPLY=($(compgen -W "{_words([c.name for c in commands])}" -- "$cur"))',
        "        fi",
        "        return 0 ;;",
    ]
    for command in commands:
        lines.append(f"    {command.name})")
        valued = [o for o in command.options if o.takes_value]
        if valued:
            lines.append('        case "$prev" in')
            for option in valued:
                if option.choices:
                    reply = f'COMPREPLY=($(compgen -W "{_words(list(option.choices))}" -- "$cur"))'
                elif option.names:
                    reply = f"_{PROG}_names {option.names}"
                else:
                    reply = 'COMPREPLY=($(compgen -f -- "$cur"))' if option.paths else "COMPREPLY=()"
                lines.append(f"        {'|'.join(option.flags)}) {reply}; return 0 ;;")
            lines.append("        esac")
        flags = _words([f for o in command.options for f in o.flags])
        lines += [
            '        if [[ "$cur" == -* ]]; then',
            f'            COMPREPLY=($(compgen -W "{flags}" -- "$cur"))',
        ]
        if command.positional_choices:
            words = _words(list(command.positional_choices))
            lines += ["        else", f'            COMPREPLY=($(compgen -W "{words}" -- "$cur"))']
        elif command.positional_names:
            lines += ["        else", f"            _{PROG}_names {command.positional_names}"]
        elif command.positionals:
            lines += ["        else", '            COMPREPLY=($(compgen -f -- "$cur"))']
        lines += ["        fi", "        return 0 ;;"]
    lines += ["    esac", "}", f"complete -o default -F _{PROG} {PROG}", ""]
    return "\n".join(lines)


# -- zsh -------------------------------------------------------------------------------------------


def _zsh_quote(text: str) -> str:
    """Text inside a single-quoted _arguments spec: brackets and colons escaped."""
    text = text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]").replace(":", "\\:")
    return text.replace("'", "'\\''")


def _zsh_spec(option: Option) -> list[str]:
    action = ""
    if option.takes_value:
        what = _zsh_quote(option.metavar.lower())
        if option.choices:
            values = f"({' '.join(option.choices)})"
        elif option.names:
            values = f"_{PROG}_names {option.names}"
        else:
            values = "_files" if option.paths else " "
        action = f":{what}:{values}"
    star = "*" if option.repeatable else ""
    return [f"'{star}{flag}[{_zsh_quote(option.help)}]{action}'" for flag in option.flags]


def zsh(top: tuple[Option, ...], commands: tuple[Command, ...]) -> str:
    """A ``#compdef`` function; sourcing it registers it with ``compdef`` as well."""
    # _describe splits "name:description" at the first colon; only quotes need escaping there.
    described = " ".join(f"'{c.name}:" + c.help.replace("'", "'\\''") + "'" for c in commands)
    lines = [
        f"#compdef {PROG}",
        f"# zsh completion for {PROG}; generated by `{PROG} completion zsh`.",
        f"# Names from the cluster: `{PROG} {COMPLETE_NAMES} KIND` with the cluster options typed so far.",
        f"_{PROG}_names() {{",
        "    local kind=$1 i",
        "    shift",
        "    local -a args names",
        "    for ((i = 1; i + 1 < CURRENT; i++)); do",
        f"        case $words[i] in ({'|'.join(CLUSTER_FLAGS)}) args+=($words[i] $words[i+1]) ;; esac",
        "    done",
        f'    names=(${{(f)"$({PROG} {COMPLETE_NAMES} $kind $args 2>/dev/null)"}})',
        '    compadd "$@" -a names',
        "}",
        f"_{PROG}() {{",
        '    local curcontext="$curcontext" state line',
        "    typeset -A opt_args",
        f"    local -a commands=({described})",
        "    _arguments -C \\",
        *(f"        {spec} \\" for o in top for spec in _zsh_spec(o)),
        "        '1: :->command' \\",
        "        '*:: :->args'",
        "    case $state in",
        f"    command) _describe -t commands '{PROG} command' commands ;;",
        "    args)",
        "        case $words[1] in",
    ]
    for command in commands:
        specs = [spec for o in command.options for spec in _zsh_spec(o)]
        if command.positional_choices:
            specs.append(f"'1:value:({' '.join(command.positional_choices)})'")
        elif command.positional_names:
            specs.append(f"'1:{command.positional_names}:_{PROG}_names {command.positional_names}'")
        elif command.positionals:
            specs.append("'*:file:_files'")
        lines.append(f"        {command.name}) _arguments {' '.join(specs)} ;;")
    lines += [
        "        esac ;;",
        "    esac",
        "}",
        f'if [ "$funcstack[1]" = "_{PROG}" ]; then _{PROG} "$@"; else compdef _{PROG} {PROG}; fi',
        "",
    ]
    return "\n".join(lines)


# -- fish ------------------------------------------------------------------------------------------


def _fish_quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _fish_option(condition: str, option: Option) -> str:
    parts = [f"complete -c {PROG} -n {_fish_quote(condition)}"]
    parts.extend(f"-l {flag[2:]}" if flag.startswith("--") else f"-s {flag[1:]}" for flag in option.flags)
    if option.takes_value:
        if option.choices:
            parts.append(f"-x -a {_fish_quote(' '.join(option.choices))}")
        elif option.names:
            parts.append(f"-x -a {_fish_quote(f'(__{PROG}_names {option.names})')}")
        else:
            parts.append("-r -F" if option.paths else "-x")
    parts.append(f"-d {_fish_quote(option.help)}")
    return " ".join(parts)


def fish(top: tuple[Option, ...], commands: tuple[Command, ...]) -> str:
    """``complete`` lines: commands first, then each command's options and file arguments."""
    lines = [
        f"# fish completion for {PROG}; generated by `{PROG} completion fish`.",
        f"# Names from the cluster: `{PROG} {COMPLETE_NAMES} KIND` with the cluster options typed so far.",
        f"function __{PROG}_names",
        "    set -l words (commandline -opc)",
        "    set -l args",
        "    for i in (seq 2 (math (count $words) - 1))",
        f"        if contains -- $words[$i] {' '.join(CLUSTER_FLAGS)}",
        "            set -a args $words[$i] $words[(math $i + 1)]",
        "        end",
        "    end",
        f"    {PROG} {COMPLETE_NAMES} $argv[1] $args 2>/dev/null",
        "end",
        f"complete -c {PROG} -f",
    ]
    lines += [_fish_option("__fish_use_subcommand", o) for o in top]
    for command in commands:
        lines.append(f"complete -c {PROG} -n __fish_use_subcommand -a {command.name} -d {_fish_quote(command.help)}")
    for command in commands:
        seen = f"__fish_seen_subcommand_from {command.name}"
        lines += [_fish_option(seen, o) for o in command.options]
        if command.positional_choices:
            words = _fish_quote(" ".join(command.positional_choices))
            lines.append(f"complete -c {PROG} -n {_fish_quote(seen)} -x -a {words}")
        elif command.positional_names:
            names = _fish_quote(f"(__{PROG}_names {command.positional_names})")
            lines.append(f"complete -c {PROG} -n {_fish_quote(seen)} -x -a {names}")
        elif command.positionals:
            lines.append(f"complete -c {PROG} -n {_fish_quote(seen)} -F")
    return "\n".join(lines) + "\n"
