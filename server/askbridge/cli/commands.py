"""`askbridge serve | acp | mcp | host | web | demo | schema | sessions | store` — the command line.

`serve` and `acp` take the same flags (protocol.md "Command line"); `mcp` takes
`--data-dir`, `--ask-timeout` and the `--log-*` flags. The parser, with every
command's flags and `--help`, is parser.py; this module runs the command.

Errors are one line on stderr that says what to do: a usage error (a bad
flag value, `--model` that is not a ModelSpec, a `--log-file` that cannot be
opened) is `askbridge CMD: error: …; see askbridge CMD --help` with status 2.
Ctrl-C ends any command quietly with status 130. `serve` and `acp` started by
hand in a terminal (stdin is a tty) say on stderr what they are for and point
to `askbridge demo`, then carry on. Nothing but protocol frames ever goes to
stdout: logs go to `--log-file` or stderr.
"""

from __future__ import annotations

import argparse
import os
import sys

from askbridge.cli.exits import EXIT_INTERRUPTED, interrupted
from askbridge.cli.logsetup import setup_logging
from askbridge.cli.parser import EXIT_USAGE, parse_args

EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a command whose reader left

# What `serve`/`acp` say when a person starts them in a terminal (they wait for a program).
TTY_HINTS = {
    "serve": "askbridge serve speaks the LSP-framed askbridge protocol on stdin/stdout for an "
    "editor or a test harness; it waits for one now. To try askbridge by hand, run "
    "`askbridge demo`. (Ctrl-C quits.)",
    "acp": "askbridge acp speaks the Agent Client Protocol on stdin/stdout for an ACP client "
    "such as Zed; it waits for one now. To try askbridge by hand, run `askbridge demo`. "
    "(Ctrl-C quits.)",
    "mcp": "askbridge mcp is an MCP server on stdin/stdout for an agent such as Claude Code, "
    "Codex or Gemini CLI (for example `claude mcp add askbridge -- askbridge mcp`); it waits "
    "for one now. To try askbridge by hand, run `askbridge demo`. (Ctrl-C quits.)",
}


def _usage_error(command: str, message: str) -> int:
    prog = f"askbridge {command}"
    print(f"{prog}: error: {message}; see {prog} --help", file=sys.stderr)
    return EXIT_USAGE


def _stdin_is_terminal() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (OSError, ValueError):  # closed stdin
        return False


def main(argv: list[str] | None = None) -> int:
    try:
        try:
            return _run(parse_args(sys.argv[1:] if argv is None else argv))
        finally:  # --help and usage errors too: a reader that left (`| head -1`) is caught here
            sys.stdout.flush()
    except BrokenPipeError:
        return _reader_left()
    except BaseException as exc:
        if interrupted(exc):  # Ctrl-C is how a person stops a server: no traceback
            return EXIT_INTERRUPTED
        raise


def _reader_left() -> int:
    """stdout's reader stopped reading (`askbridge host --status | head -1`): the rest is
    not wanted, and neither is a traceback. Python's exit would flush stdout into the
    closed pipe again, so stdout goes to /dev/null first."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return EXIT_BROKEN_PIPE


def _write_schemas(out: str) -> int:
    from pathlib import Path

    from askbridge.protocol.schema import write_schemas

    try:
        written = write_schemas(out)
    except OSError as exc:
        if Path(out).exists() and not Path(out).is_dir():
            reason = "it exists and is not a directory"
        else:
            reason = exc.strerror or str(exc)
            if exc.filename is not None and str(exc.filename) != out:
                reason += f" ({exc.filename})"
        print(f"askbridge schema: cannot write --out {out}: {reason}", file=sys.stderr)
        return 1
    for path in written:
        print(path)
    return 0


def _run(args: argparse.Namespace) -> int:
    if args.command != "schema":
        from askbridge.process.paths import data_dir_of, data_dir_problem

        # S5: one line naming the path, before any command trips over it.
        problem = data_dir_problem(data_dir_of(getattr(args, "data_dir", None)))
        if problem is not None:
            print(f"askbridge {args.command}: {problem}", file=sys.stderr)
            return 1
    if args.command == "schema":
        return _write_schemas(args.out)
    if args.command == "sessions":
        from askbridge.cli.sessions import run_sessions

        return run_sessions(args)
    if args.command == "store":
        from askbridge.cli.store_check import run_store

        return run_store(args)
    if hasattr(args, "store"):
        from askbridge.host.store.store_open import store_choice

        args.store = store_choice(args.store)  # G1: --store, else ASKBRIDGE_STORE, else None
        if args.store is not None:
            from askbridge.host.store.store_url import STORE_ENV

            # The host this command starts or attaches to reads it from there: a spawned
            # host inherits it, and the door's hello carries it for the G1 check.
            os.environ[STORE_ENV] = args.store
    if args.command == "demo" and (args.web or args.listen):
        if not args.web or args.auto:
            return _usage_error("demo", "--listen goes with --web, and --web without --auto")
        from askbridge.demo.web import run_web_demo

        return run_web_demo(args.data_dir, args.listen or "127.0.0.1:0")
    if args.command == "demo":
        from askbridge.demo import run_demo

        return run_demo(auto=args.auto, data_dir=args.data_dir)
    try:
        setup_logging(getattr(args, "log_file", None), getattr(args, "log_level", "WARNING"))
    except OSError as exc:
        reason = exc.strerror or str(exc)
        return _usage_error(args.command, f"cannot open --log-file {args.log_file}: {reason}")
    if args.command == "web":
        from askbridge.web import run_web

        return run_web(args)
    if args.command == "host":
        from askbridge.daemon.main import run_host

        return run_host(args)
    if _stdin_is_terminal() and args.command in TTY_HINTS:
        print(TTY_HINTS[args.command], file=sys.stderr, flush=True)
    from askbridge.daemon.front import run_front_door

    if args.host == "auto":
        from askbridge.process.attach import attach_refusal
        from askbridge.process.paths import data_dir_of

        refusal = attach_refusal(data_dir_of(args.data_dir))
        if refusal is not None:
            print(f"askbridge {args.command}: {refusal}", file=sys.stderr)
            return 1
    door = {"serve": "lsp", "acp": "acp", "mcp": "mcp"}[args.command]
    if getattr(args, "for_web", False) and args.host == "auto":
        door = "web"  # the LSP door, named in the host's listing (`askbridge host --status`)
    return run_front_door(door, args)
