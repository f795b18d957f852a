"""The `askbridge` console script: an editor's front door starts before argparse loads.

`askbridge serve|acp|mcp` is what an editor runs on every start, and attaching to
a running host is all it does (H4). Building the full command line (argparse,
logging, every command's flags) costs more than the attach itself, so a command
line of only `--data-dir D` and `--host auto|inline` (what the editors and the
harnesses pass), with stdin not a terminal, needs no parser: with `--host auto`
(or no `--host` and `ASKBRIDGE_HOST` not `inline`) it goes to `attach.attach` at
once, with exactly the values the full parser would give (no session defaults,
the host's own idle exit and log); with `--host inline` (or `ASKBRIDGE_HOST=inline`)
to `daemon.inline.serve_inline`, with logs on stderr at WARNING, as commands.py would
call it. Anything else — another flag, `--help`, a value to check — goes through
`askbridge.cli.commands.main`, which behaves the same on those command lines
(tests/e2e/test_entry.py runs both).

What skipping the parser buys, measured (`askbridge serve --data-dir D` attaching to a
running host, to its exit, on a 2-core machine under load): through `commands.main` (argparse,
parser.py, logging) 158.8 million instructions (callgrind), here 46.3 million; the
minimum of 40 runs 39.2 ms against 15.6 ms, where `python -c "import pygls"` took 10.7 ms
(benchmarks/bench_bridge_startup.py: attached <= 1.5x). Even a bare argparse parser of
this one command and its two flags costs 50.6 million instructions (~15 ms).

The inline host still opens its data directory before it answers anything
(lsp/early.py says why): a directory it cannot use is one line on stderr and
status 1, with no reply to the client, as on the full path.
"""

from __future__ import annotations

import os
import sys

from askbridge.cli.exits import EXIT_INTERRUPTED, interrupted
from askbridge.process.attach import attach_refusal, default_host_mode  # stdlib only: no cost here

_DOORS = {"serve": "lsp", "acp": "acp", "mcp": "mcp"}


def plain_command_line(
    argv: list[str], stdin_is_terminal: bool
) -> tuple[str, str | None, str] | None:
    """(door, --data-dir, host mode) when `argv` needs no parser, else None."""
    if not argv or argv[0] not in _DOORS or stdin_is_terminal:
        return None  # a terminal gets the hint for a person (cli.py)
    if os.environ.get("ASKBRIDGE_STORE"):
        return None  # a team store (G1): the full command line reads it
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
            if value not in ("auto", "inline"):
                return None
            host = value
        else:
            data_dir = value
    return _DOORS[argv[0]], data_dir, host


def plain_front_door(argv: list[str], stdin_is_terminal: bool) -> tuple[str, str | None] | None:
    """(door, --data-dir) when `argv` attaches to a host (`--host auto`) and needs no parser."""
    plain = plain_command_line(argv, stdin_is_terminal)
    if plain is None or plain[2] != "auto":
        return None
    return plain[0], plain[1]


def main(argv: list[str] | None = None) -> int:
    """Ctrl-C is status 130 from the first import on: the full command line's modules take
    ~50-100 ms to import, and Ctrl-C in them printed a traceback and ended killed by SIGINT
    (measured: `askbridge host` by hand, interrupted in its first 0.3 s)."""
    try:
        return _main(sys.argv[1:] if argv is None else argv)
    except BaseException as exc:
        if interrupted(exc):
            return EXIT_INTERRUPTED
        raise


def _main(args: list[str]) -> int:
    plain = plain_command_line(args, sys.stdin is None or sys.stdin.isatty())
    if plain is None:
        from askbridge.cli.commands import main as full_main

        return full_main(args)
    from askbridge.process.paths import data_dir_of, data_dir_problem

    door, data_dir_arg, host = plain
    data_dir = data_dir_of(data_dir_arg)
    problem = data_dir_problem(data_dir)  # S5: one line naming the path
    if problem is not None:
        print(f"askbridge {args[0]}: {problem}", file=sys.stderr)
        return 1
    if host == "inline":
        return _run_inline(door, data_dir)
    refusal = attach_refusal(data_dir)
    if refusal is not None:
        print(f"askbridge {args[0]}: {refusal}", file=sys.stderr)
        return 1
    from askbridge import __version__
    from askbridge.process.attach import attach

    return attach(door, data_dir, {}, __version__, 60.0)


def _run_inline(door: str, data_dir: str) -> int:
    """What `cli.py` runs for this command line: the inline host with no session defaults
    (the parser's one, `--max-turn-requests` 1000, is the host's own default: the attach
    path above leaves it out too), logs on stderr at WARNING. Those are set up once the
    directory is held and `initialize` answered: importing and configuring logging is
    ~15 ms of CPU, and nothing before the answer logs (a refusal is one printed line)."""
    from askbridge.daemon.inline import serve_inline

    return serve_inline(door, data_dir, {}, after_answer=_setup_logging)


def _setup_logging() -> None:
    from askbridge.cli.logsetup import setup_logging

    setup_logging()


if __name__ == "__main__":
    sys.exit(main())
