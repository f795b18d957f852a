"""The `askbridge` console script: an editor's front door attaches before argparse loads.

`askbridge serve|acp|mcp` is what an editor runs on every start, and attaching to
a running host is all it does (H4). Building the full command line (argparse,
logging, every command's flags) costs more than the attach itself, so a command
line of only `--data-dir D` and `--host auto` (what the editors pass), with stdin
not a terminal and `ASKBRIDGE_HOST` not `inline`, goes to `attach.attach` at
once, with exactly the values the full parser would give (no session defaults,
the host's own idle exit and log). Anything else — another flag, `--help`, a
value to check — goes through `askbridge.cli.main`, which behaves the same on
those command lines.
"""

from __future__ import annotations

import sys

from askbridge.attach import default_host_mode  # stdlib only: no cost on the attach path

_DOORS = {"serve": "lsp", "acp": "acp", "mcp": "mcp"}
_EXIT_INTERRUPTED = 130


def plain_front_door(argv: list[str], stdin_is_terminal: bool) -> tuple[str, str | None] | None:
    """(door, --data-dir) when `argv` needs no parser, else None."""
    if not argv or argv[0] not in _DOORS:
        return None
    data_dir: str | None = None
    host = default_host_mode()
    rest = iter(argv[1:])
    for arg in rest:
        flag, eq, value = arg.partition("=")
        if flag not in ("--data-dir", "--host"):
            return None
        if not eq:
            value = next(rest, "")
        if not value or value.startswith("-"):
            return None  # the parser's error message, not ours
        if flag == "--host":
            if value != "auto":
                return None
            host = value
        else:
            data_dir = value
    if host == "inline" or stdin_is_terminal:
        return None  # the inline host, or the hint for a person at a terminal (cli.py)
    return _DOORS[argv[0]], data_dir


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    plain = plain_front_door(args, sys.stdin is None or sys.stdin.isatty())
    if plain is None:
        from askbridge.cli import main as full_main

        return full_main(args)
    from askbridge import __version__
    from askbridge.attach import attach
    from askbridge.paths import data_dir_of

    door, data_dir = plain
    from askbridge.paths import data_dir_problem

    problem = data_dir_problem(data_dir_of(data_dir))  # S5: one line naming the path
    if problem is not None:
        print(f"askbridge {args[0]}: {problem}", file=sys.stderr)
        return 1
    try:
        return attach(door, data_dir_of(data_dir), {}, __version__, 60.0)
    except KeyboardInterrupt:
        return _EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
