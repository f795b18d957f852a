"""The `askbridge` console script: an editor's front door starts before argparse loads.

`askbridge serve|acp|mcp` is what an editor runs on every start, and attaching to
a running host is all it does (H4). Building the full command line (argparse,
logging, every command's flags) costs more than the attach itself, so a command
line of only `--data-dir D` and `--host auto|inline` (what the editors and the
harnesses pass), with stdin not a terminal, needs no parser: with `--host auto`
(or no `--host` and `ASKBRIDGE_HOST` not `inline`) it goes to `attach.attach` at
once, with exactly the values the full parser would give (no session defaults,
the host's own idle exit and log); with `--host inline` (or `ASKBRIDGE_HOST=inline`)
to `daemon.inline.serve_inline`, with logs on stderr at WARNING, as `cli.py` would
call it. Anything else — another flag, `--help`, a value to check — goes through
`askbridge.cli.main`, which behaves the same on those command lines
(tests/e2e/test_entry.py runs both).

What skipping the parser buys, measured (`askbridge serve --data-dir D` attaching to a
running host, to its exit, on a 2-core machine under load): through `cli.main` (argparse,
cli_parser.py, logging) 158.8 million instructions (callgrind), here 46.3 million; the
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

from askbridge.attach import default_host_mode  # stdlib only: no cost on the attach path

_DOORS = {"serve": "lsp", "acp": "acp", "mcp": "mcp"}
EXIT_INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for Ctrl-C


def interrupted(exc: BaseException) -> bool:
    """Whether `exc` is Ctrl-C's KeyboardInterrupt, or was raised because of it.

    The inline host answers `initialize` before it has imported everything (lsp/early.py),
    so Ctrl-C can land inside an import. Where that import is running a class body's
    `__set_name__` (a dataclass field), Python 3.11 wraps the KeyboardInterrupt in a
    RuntimeError: measured under load, 1 Ctrl-C in ~40 ended with that traceback and
    status 1 instead of 130. The interrupt is still the cause, so it is still Ctrl-C."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def attach_refusal(data_dir: str) -> str | None:
    """Why a front door cannot attach with `data_dir` (one line, as the inline host words it),
    or None: the directory is made here (0700, as the host makes it), and one that cannot
    be written is fine only while a host serves it (attaching writes nothing there)."""
    try:
        os.makedirs(data_dir, mode=0o700, exist_ok=True)
    except OSError as exc:
        return f"cannot create data directory {data_dir}: {exc.strerror or exc}"
    if os.access(data_dir, os.W_OK | os.X_OK):
        return None
    from askbridge.hostsock import connect

    try:
        sock = connect(data_dir, 1.0)
    except OSError:
        sock = None
    if sock is not None:
        sock.close()
        return None
    try:
        read_only = bool(os.statvfs(data_dir).f_flag & os.ST_RDONLY)
    except OSError:
        read_only = False
    why = "it is on a read-only file system" if read_only else "it is not writable"
    return f"cannot use data directory {data_dir}: {why}, and no askbridge host serves it"


def plain_command_line(
    argv: list[str], stdin_is_terminal: bool
) -> tuple[str, str | None, str] | None:
    """(door, --data-dir, host mode) when `argv` needs no parser, else None."""
    if not argv or argv[0] not in _DOORS or stdin_is_terminal:
        return None  # a terminal gets the hint for a person (cli.py)
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
        from askbridge.cli import main as full_main

        return full_main(args)
    from askbridge.paths import data_dir_of, data_dir_problem

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
    from askbridge.attach import attach

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
    from askbridge.logsetup import setup_logging

    setup_logging()


if __name__ == "__main__":
    sys.exit(main())
