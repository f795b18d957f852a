"""`askbridge serve | acp | mcp | web | demo | schema` — the command line.

`serve` and `acp` take the same flags (protocol.md "Command line"); `mcp` takes
`--data-dir`, `--ask-timeout` and the `--log-*` flags. Every
command's `--help` describes it and lists each flag with its default; the top
level lists the commands, one line each.

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
import logging
import sys
from typing import Any, NoReturn

from askbridge import __version__
from askbridge.protocol.defaults import (
    ASK_TIMEOUT_DEFAULT_SECONDS,
    ASK_TIMEOUT_MAX_SECONDS,
    MAX_TURN_REQUESTS_DEFAULT,
)

DEFAULT_DATA_DIR = "$XDG_STATE_HOME/askbridge, else ~/.local/state/askbridge"
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for Ctrl-C

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


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: the usage block would bury the sentence that matters."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}; see {self.prog} --help\n")


def _model_arg(value: str) -> dict[str, Any]:
    """`--model`: inline ModelSpec JSON, or `script:PATH` (a ModelSpec or a bare list of steps)."""
    # Imported here, not at the top: pydantic is ~25 ms of every start-up otherwise.
    from askbridge.protocol.model_spec import describe_model_spec_error, parse_model_spec_option

    try:
        spec = parse_model_spec_option(value)
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        raise argparse.ArgumentTypeError(describe_model_spec_error(exc)) from exc
    return spec.model_dump(mode="json", by_alias=True, exclude_none=True)


def _timeout_arg(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n != -1 and not 1 <= n <= ASK_TIMEOUT_MAX_SECONDS:
        raise argparse.ArgumentTypeError(
            f"must be -1 or an integer from 1 to {ASK_TIMEOUT_MAX_SECONDS} (seconds)"
        )
    return n


def _positive_int(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError("must be a positive integer")
    return n


def _add_data_dir(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--data-dir",
        metavar="DIR",
        help=f"where sessions live (default: {DEFAULT_DATA_DIR})",
    )


def _add_ask_timeout(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--ask-timeout",
        type=_timeout_arg,
        default=None,
        metavar="N",
        help="default timeout of timed questions in seconds, -1 for none"
        f" (default: {ASK_TIMEOUT_DEFAULT_SECONDS})",
    )


def _add_log_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--log-file", metavar="PATH", help="append logs here instead of stderr (default: stderr)"
    )
    p.add_argument(
        "--log-level",
        default="WARNING",
        type=str.upper,
        choices=["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"],
        metavar="LEVEL",
        help="DEBUG, INFO, WARNING, ERROR or CRITICAL (default: WARNING)",
    )


def add_server_flags(p: argparse.ArgumentParser) -> None:
    _add_data_dir(p)
    p.add_argument(
        "--model",
        type=_model_arg,
        metavar="SPEC",
        help='the model of new sessions: ModelSpec JSON such as \'{"kind": "openai", "model": '
        '"deepseek-chat"}\', or script:PATH (default: none; the agent then answers that no '
        "model is configured)",
    )
    p.add_argument(
        "--ask-mode",
        choices=["legacy", "timed"],
        default=None,
        help="the ask_user_question schema the model sees: legacy blocks until answered, timed "
        "returns pending at its timeout (default: legacy)",
    )
    _add_ask_timeout(p)
    p.add_argument(
        "--max-turn-requests",
        type=_positive_int,
        default=MAX_TURN_REQUESTS_DEFAULT,
        metavar="N",
        help="model requests per turn before it ends with max_turn_requests (default: 1000)",
    )
    _add_log_flags(p)
    p.add_argument("--stdio", action="store_true", help=argparse.SUPPRESS)


def _seconds(value: str) -> float:
    try:
        n = float(value)
    except ValueError:
        n = -1.0
    if not n > 0:
        raise argparse.ArgumentTypeError("must be a positive number of seconds")
    return n


def add_front_door_flags(p: argparse.ArgumentParser) -> None:
    from askbridge.attach import DEFAULT_HOST_MODE_ENV, default_host_mode

    p.add_argument(
        "--host",
        choices=["auto", "inline"],
        default=default_host_mode(),
        help="auto: attach to the data directory's host, starting one when none runs; inline: "
        f"this process is the host (default: auto, or ${DEFAULT_HOST_MODE_ENV})",
    )
    p.add_argument(
        "--idle-exit",
        type=_seconds,
        default=60.0,
        metavar="S",
        help="a host this command starts exits once no front door was attached for S seconds "
        "(default: 60)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="askbridge",
        description="Let an AI agent ask the human a structured question, wherever the human "
        "works. New here? Run `askbridge demo`.",
    )
    parser.add_argument("--version", action="version", version=f"askbridge {__version__}")
    sub = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", title="commands", parser_class=_Parser
    )
    serve = sub.add_parser(
        "serve",
        help="serve an editor over stdio (LSP framing): Neovim, VS Code, any LSP client",
        description="Serve the askbridge protocol (LSP-framed JSON-RPC) on stdin/stdout for an "
        "editor or a test harness. Not interactive: to try askbridge by hand, run "
        "`askbridge demo`.",
    )
    add_server_flags(serve)
    add_front_door_flags(serve)
    acp = sub.add_parser(
        "acp",
        help="serve an ACP client over stdio (Agent Client Protocol): Zed and others",
        description="Serve the same sessions as an Agent Client Protocol agent "
        "(newline-delimited JSON-RPC on stdin/stdout) for a client such as Zed.",
    )
    add_server_flags(acp)
    add_front_door_flags(acp)
    host = sub.add_parser(
        "host",
        help="the host of a data directory (started by the front doors; --status, --stop)",
        description="The process that owns a data directory's sessions; `serve`, `acp` and "
        "`mcp` attach to it (one per data directory, started on demand). Its log is "
        "<data-dir>/host.log.",
    )
    add_server_flags(host)
    host.set_defaults(log_level="INFO")
    host.add_argument(
        "--idle-exit",
        type=_seconds,
        default=60.0,
        metavar="S",
        help="exit once no front door was attached for S seconds (default: 60)",
    )
    control = host.add_mutually_exclusive_group()
    control.add_argument(
        "--status", action="store_true", help="print the running host's pid, version, front doors"
    )
    control.add_argument("--stop", action="store_true", help="stop the running host now")
    mcp = sub.add_parser(
        "mcp",
        help="serve an MCP client over stdio: Claude Code, Codex, Gemini CLI and others",
        description="An MCP server on stdin/stdout whose tools (ask_user_question, get_answers, "
        "approval_prompt) ask the human through the editors attached to askbridge.",
    )
    _add_data_dir(mcp)
    _add_ask_timeout(mcp)
    _add_log_flags(mcp)
    mcp.add_argument("--stdio", action="store_true", help=argparse.SUPPRESS)
    add_front_door_flags(mcp)
    demo = sub.add_parser(
        "demo",
        help="try it: a guided session in this terminal",
        description="A guided session in the terminal against a real `askbridge serve`: a "
        "scripted agent asks four questions and you answer them.",
    )
    demo.add_argument(
        "--auto",
        action="store_true",
        help="answer by itself and exit 0 (default: only when stdin is not a terminal)",
    )
    demo.add_argument(
        "--data-dir",
        metavar="DIR",
        help="keep the demo's session in DIR (default: a temporary directory, removed at the end)",
    )
    schema = sub.add_parser(
        "schema",
        help="write the JSON Schema of every protocol payload",
        description="Write one JSON Schema file per protocol payload, and index.json.",
    )
    schema.add_argument(
        "--out", required=True, metavar="DIR", help="directory to write into (required)"
    )
    from askbridge.sessions_cli import add_sessions_parser  # `askbridge sessions`

    add_sessions_parser(sub)
    from askbridge.web import add_web_parser  # `askbridge web` (B1)

    web = add_web_parser(sub)
    _add_data_dir(web)
    _add_log_flags(web)
    add_front_door_flags(web)
    return parser


def setup_logging(args: argparse.Namespace) -> None:
    """Logs to `--log-file` or stderr; OSError when the file cannot be opened."""
    handler: logging.Handler
    if getattr(args, "log_file", None):
        handler = logging.FileHandler(args.log_file, encoding="utf-8")
    else:
        handler = logging.StreamHandler(sys.stderr)
    from askbridge.log_lines import LineFormatter, lean_records  # S12's lines, cheaply

    lean_records()
    handler.setFormatter(LineFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(getattr(args, "log_level", "WARNING"))


def _usage_error(command: str, message: str) -> int:
    prog = f"askbridge {command}"
    print(f"{prog}: error: {message}; see {prog} --help", file=sys.stderr)
    return EXIT_USAGE


def _stdin_is_terminal() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (OSError, ValueError):  # closed stdin
        return False


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The parsed command line; an unknown flag is an error of its command, not of the top."""
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        commands.choices[args.command].error(f"unrecognized arguments: {' '.join(unknown)}")
    return args


def main(argv: list[str] | None = None) -> int:
    try:
        return _run(parse_args(argv))
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED  # Ctrl-C is how a person stops a server: no traceback


def _run(args: argparse.Namespace) -> int:
    if args.command != "schema":
        from askbridge.paths import data_dir_of, data_dir_problem

        # S5: one line naming the path, before any command trips over it.
        problem = data_dir_problem(data_dir_of(getattr(args, "data_dir", None)))
        if problem is not None:
            print(f"askbridge {args.command}: {problem}", file=sys.stderr)
            return 1
    if args.command == "schema":
        from askbridge.protocol.schema import write_schemas

        for path in write_schemas(args.out):
            print(path)
        return 0
    if args.command == "sessions":
        from askbridge.sessions_cli import run_sessions

        return run_sessions(args)
    if args.command == "demo":
        from askbridge.demo import run_demo

        return run_demo(auto=args.auto, data_dir=args.data_dir)
    try:
        setup_logging(args)
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

    return run_front_door({"serve": "lsp", "acp": "acp", "mcp": "mcp"}[args.command], args)


if __name__ == "__main__":
    sys.exit(main())
