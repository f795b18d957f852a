"""`askbridge serve | acp | demo | schema` — the command line.

`serve` and `acp` take the same flags (protocol.md "Command line"); invalid
flags end the process with a usage message and status 2. Nothing but
protocol frames ever goes to stdout: logs go to `--log-file` or stderr.
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any

from askbridge import __version__


def _model_arg(value: str) -> dict[str, Any]:
    """`--model`: inline ModelSpec JSON, or `script:PATH` (a ModelSpec or a bare list of steps)."""
    # Imported here, not at the top: pydantic is ~25 ms of every start-up otherwise.
    from pydantic import ValidationError

    from askbridge.protocol.model_spec import parse_model_spec_option

    try:
        spec = parse_model_spec_option(value)
    except (OSError, ValueError, ValidationError) as exc:
        raise argparse.ArgumentTypeError(f"invalid model spec: {exc}") from exc
    return spec.model_dump(mode="json", by_alias=True, exclude_none=True)


def _timeout_arg(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n != -1 and not 1 <= n <= 2147483:
        raise argparse.ArgumentTypeError("must be -1 or an integer from 1 to 2147483 (seconds)")
    return n


def _positive_int(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError("must be a positive integer")
    return n


def add_server_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data-dir", help="where sessions live (default $XDG_STATE_HOME/askbridge)")
    p.add_argument("--model", type=_model_arg, help="ModelSpec JSON or script:PATH")
    p.add_argument("--ask-mode", choices=["legacy", "timed"], default=None)
    p.add_argument("--ask-timeout", type=_timeout_arg, default=None, help="-1 or 1..2147483 s")
    p.add_argument("--max-turn-requests", type=_positive_int, default=1000)
    p.add_argument("--log-file", help="write logs here instead of stderr")
    p.add_argument(
        "--log-level",
        default="WARNING",
        type=str.upper,
        choices=["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"],
    )
    p.add_argument("--stdio", action="store_true", help=argparse.SUPPRESS)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="askbridge", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"askbridge {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    add_server_flags(sub.add_parser("serve", help="serve the LSP-framed protocol on stdio"))
    add_server_flags(sub.add_parser("acp", help="serve ACP (newline-delimited JSON-RPC) on stdio"))
    demo = sub.add_parser("demo", help="a guided session in the terminal")
    demo.add_argument("--auto", action="store_true", help="answer by itself and exit 0")
    demo.add_argument("--data-dir", help="where the demo's session lives (default: a temp dir)")
    schema = sub.add_parser("schema", help="write one JSON Schema per payload")
    schema.add_argument("--out", required=True)
    from askbridge.sessions_cli import add_sessions_parser  # `askbridge sessions`

    add_sessions_parser(sub)
    return parser


def setup_logging(args: argparse.Namespace) -> None:
    handler: logging.Handler
    if getattr(args, "log_file", None):
        handler = logging.FileHandler(args.log_file, encoding="utf-8")
    else:
        handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(getattr(args, "log_level", "WARNING"))


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
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
    setup_logging(args)
    if args.command == "serve":
        from askbridge.lsp.main import run_serve

        return run_serve(args)
    from askbridge.acp.main import run_acp

    return run_acp(args)


if __name__ == "__main__":
    sys.exit(main())
