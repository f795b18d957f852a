"""The parser of `askbridge`'s command line: every command and its `--help`.

Each command's `--help` describes it and lists each flag with its default; the
top level lists the commands, one line each; the flags several commands share, and
the checks of their values, are cli/flags.py. A usage error (a bad flag value,
`--model` that is not a ModelSpec, an unknown flag) is one line,
`askbridge CMD: error: …; see askbridge CMD --help`, with status 2.

`parse_args` builds only the parser of the command its command line names (under
the same top level): the same parser, flags and messages, without the cost of
building every other command's (their modules, ~10 flags each). That cost is paid
before `askbridge serve --host inline` can answer its client's `initialize`
(lsp/early.py, benchmarks/bench_bridge_startup.py); the whole parser is built
only for a command line that names no command (`--help`, `--version`, a typo).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any, NoReturn

from askbridge import __version__
from askbridge.cli.flags import (
    add_ask_timeout,
    add_data_dir,
    add_front_door_flags,
    add_log_flags,
    add_server_flags,
    add_store_flag,
    delegation_problem,
    seconds_arg,
)

EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: the usage block would bury the sentence that matters."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}; see {self.prog} --help\n")


def _server_door_flags(p: argparse.ArgumentParser) -> None:
    add_server_flags(p)
    add_front_door_flags(p)


def _serve_flags(p: argparse.ArgumentParser) -> None:
    _server_door_flags(p)
    # The web door's own `serve`: attached, it is listed as `web`, apart from editor windows.
    p.add_argument("--for-web", action="store_true", help=argparse.SUPPRESS)


def _host_flags(p: argparse.ArgumentParser) -> None:
    add_server_flags(p)
    add_store_flag(p)
    p.set_defaults(log_level="INFO")
    p.add_argument(
        "--idle-exit",
        type=seconds_arg,
        default=60.0,
        metavar="S",
        help="exit once no front door was attached for S seconds (default: 60)",
    )
    control = p.add_mutually_exclusive_group()
    control.add_argument(
        "--status", action="store_true", help="print the running host's pid, version, front doors"
    )
    control.add_argument("--stop", action="store_true", help="stop the running host now")


def _mcp_flags(p: argparse.ArgumentParser) -> None:
    add_data_dir(p)
    add_ask_timeout(p)
    add_log_flags(p)
    p.add_argument("--stdio", action="store_true", help=argparse.SUPPRESS)
    add_front_door_flags(p)


def _demo_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--auto",
        action="store_true",
        help="answer by itself and exit 0 (default: only when stdin is not a terminal)",
    )
    p.add_argument(
        "--data-dir",
        metavar="DIR",
        help="keep the demo's session in DIR (default: a temporary directory, removed at the end)",
    )
    p.add_argument(
        "--web",
        action="store_true",
        help="ask the questions on the web page (`askbridge web`) instead of in the terminal"
        " (default: the terminal)",
    )
    p.add_argument(
        "--listen",
        metavar="HOST:PORT",
        help="with --web: where the page is served (default: a free port on 127.0.0.1)",
    )


def _schema_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", required=True, metavar="DIR", help="directory to write into (required)")


def _command(
    name: str, flags: Callable[[argparse.ArgumentParser], None], help: str, description: str
) -> Callable[[Any], None]:
    """What adds the command `name` to the top level's subparsers: its parser and `flags`."""

    def add(sub: Any) -> None:
        flags(sub.add_parser(name, help=help, description=description))

    return add


def _add_sessions(sub: Any) -> None:
    from askbridge.cli.sessions import add_sessions_parser  # `askbridge sessions`

    add_sessions_parser(sub)


def _add_store(sub: Any) -> None:
    from askbridge.cli.store_check import add_store_parser  # `askbridge store check` (G1)

    add_store_parser(sub)


def _add_web(sub: Any) -> None:
    from askbridge.web import add_web_parser  # `askbridge web` (B1)

    web = add_web_parser(sub)
    add_data_dir(web)
    add_log_flags(web)
    add_front_door_flags(web)


# In the order the top level lists them.
COMMANDS: dict[str, Callable[[Any], None]] = {
    "serve": _command(
        "serve",
        _serve_flags,
        help="serve an editor over stdio (LSP framing): Neovim, VS Code, any LSP client",
        description="Serve the askbridge protocol (LSP-framed JSON-RPC) on stdin/stdout for an "
        "editor or a test harness. Not interactive: to try askbridge by hand, run "
        "`askbridge demo`.",
    ),
    "acp": _command(
        "acp",
        _server_door_flags,
        help="serve an ACP client over stdio (Agent Client Protocol): Zed and others",
        description="Serve the same sessions as an Agent Client Protocol agent "
        "(newline-delimited JSON-RPC on stdin/stdout) for a client such as Zed.",
    ),
    "host": _command(
        "host",
        _host_flags,
        help="the host of a data directory (started by the front doors; --status, --stop)",
        description="The process that owns a data directory's sessions; `serve`, `acp` and "
        "`mcp` attach to it (one per data directory, started on demand). Its log is "
        "<data-dir>/host.log.",
    ),
    "mcp": _command(
        "mcp",
        _mcp_flags,
        help="serve an MCP client over stdio: Claude Code, Codex, Gemini CLI and others",
        description="An MCP server on stdin/stdout whose tools (ask_user_question, get_answers, "
        "approval_prompt) ask the human through the editors attached to askbridge.",
    ),
    "demo": _command(
        "demo",
        _demo_flags,
        help="try it: a guided session in this terminal",
        description="A guided session in the terminal against a real `askbridge serve`: a "
        "scripted agent asks four questions and you answer them.",
    ),
    "schema": _command(
        "schema",
        _schema_flags,
        help="write the JSON Schema of every protocol payload",
        description="Write one JSON Schema file per protocol payload, and index.json.",
    ),
    "sessions": _add_sessions,
    "store": _add_store,
    "web": _add_web,
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line; with `command`, the top level holding that command's parser alone."""
    return _build(command)[0]


def _build(command: str | None) -> tuple[argparse.ArgumentParser, dict[str, Any]]:
    """The parser and its commands' parsers by name (`add_subparsers().choices`)."""
    parser = _Parser(
        prog="askbridge",
        description="Let an AI agent ask the human a structured question, wherever the human "
        "works. New here? Run `askbridge demo`.",
    )
    parser.add_argument("--version", action="version", version=f"askbridge {__version__}")
    sub = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", title="commands", parser_class=_Parser
    )
    for name, add in COMMANDS.items():
        if command in (None, name):
            add(sub)
    return parser, sub.choices


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The parsed command line; an unknown flag is an error of its command, not of the top."""
    parser, commands = _build(argv[0] if argv and argv[0] in COMMANDS else None)
    args, unknown = parser.parse_known_args(argv)
    problem = f"unrecognized arguments: {' '.join(unknown)}" if unknown else None
    problem = problem or delegation_problem(args)
    if problem:
        commands[args.command].error(problem)
    return args
