"""The flags `askbridge`'s commands share, and the checks of their values (cli/parser.py).

A value that fails its check is the command's one-line usage error (status 2),
worded here: `argparse.ArgumentTypeError` carries the sentence.
"""

from __future__ import annotations

import argparse
from typing import Any

from askbridge.protocol.defaults import (
    ASK_TIMEOUT_DEFAULT_SECONDS,
    ASK_TIMEOUT_MAX_SECONDS,
    DELEGATION_LIMITS_DEFAULT,
    MAX_TURN_REQUESTS_DEFAULT,
)

DEFAULT_DATA_DIR = "$XDG_STATE_HOME/askbridge, else ~/.local/state/askbridge"


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


_DELEGATION_DEFAULTS = ",".join(f"{k}={v}" for k, v in DELEGATION_LIMITS_DEFAULT.items())
_DELEGATION_LEAST = {"depth": 0, "children": 0, "sessions": 0, "requests": 1}


def _delegation_arg(value: str) -> dict[str, int]:
    """`--delegation-limits depth=N,children=N,sessions=N,requests=N` (any of them)."""
    out: dict[str, int] = {}
    for item in value.split(","):
        key, _, number = item.strip().partition("=")
        if key not in DELEGATION_LIMITS_DEFAULT:
            raise argparse.ArgumentTypeError(
                f"unknown limit {key!r}; expected any of {_DELEGATION_DEFAULTS} (comma-separated)"
            )
        least = _DELEGATION_LEAST[key]
        if not number.strip().isdigit() or int(number) < least:
            raise argparse.ArgumentTypeError(f"{key} must be an integer of at least {least}")
        out[key] = int(number)
    return out


def delegation_problem(args: argparse.Namespace) -> str | None:
    """S16: limits above the defaults only with `--raise-delegation-limits`."""
    limits = getattr(args, "delegation_limits", None) or {}
    if getattr(args, "raise_delegation_limits", False):
        return None
    above = [f"{k}={v}" for k, v in limits.items() if v > DELEGATION_LIMITS_DEFAULT[k]]
    if not above:
        return None
    return (
        f"--delegation-limits {','.join(above)} is above the default "
        f"({_DELEGATION_DEFAULTS}); add --raise-delegation-limits to allow it"
    )


def add_data_dir(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--data-dir",
        metavar="DIR",
        help=f"where sessions live (default: {DEFAULT_DATA_DIR})",
    )


def add_ask_timeout(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--ask-timeout",
        type=_timeout_arg,
        default=None,
        metavar="N",
        help="default timeout of timed questions in seconds, -1 for none"
        f" (default: {ASK_TIMEOUT_DEFAULT_SECONDS})",
    )


def add_log_flags(p: argparse.ArgumentParser) -> None:
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
    add_data_dir(p)
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
    add_ask_timeout(p)
    p.add_argument(
        "--max-turn-requests",
        type=_positive_int,
        default=MAX_TURN_REQUESTS_DEFAULT,
        metavar="N",
        help="model requests per turn before it ends with max_turn_requests (default: 1000)",
    )
    p.add_argument(
        "--delegation-limits",
        type=_delegation_arg,
        default=None,
        metavar="LIMITS",
        help="bounds of one prompt's tree of delegated agents: any of depth (levels), children "
        "(delegate calls per step), sessions and requests (model requests, the prompt's own "
        f"included), comma-separated (default: {_DELEGATION_DEFAULTS})",
    )
    p.add_argument(
        "--raise-delegation-limits",
        action="store_true",
        help="allow --delegation-limits above the defaults (default: off)",
    )
    add_log_flags(p)
    p.add_argument("--stdio", action="store_true", help=argparse.SUPPRESS)


def seconds_arg(value: str) -> float:
    try:
        n = float(value)
    except ValueError:
        n = -1.0
    if not n > 0:
        raise argparse.ArgumentTypeError("must be a positive number of seconds")
    return n


def _store_arg(value: str) -> str:
    """`--store`: a PostgreSQL address (checked for its form only: no driver at start-up)."""
    from askbridge.host.store.store_url import store_problem

    problem = store_problem(value)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return value


def add_store_flag(p: argparse.ArgumentParser) -> None:
    """G1: the store of a host this command starts (ASKBRIDGE_STORE when not given)."""
    p.add_argument(
        "--store",
        type=_store_arg,
        default=None,
        metavar="URL",
        help="the team store: a postgresql:// URL or libpq key=value words that every host "
        "of the team shares (default: $ASKBRIDGE_STORE, else the data directory's SQLite)",
    )


def add_front_door_flags(p: argparse.ArgumentParser) -> None:
    from askbridge.process.attach import DEFAULT_HOST_MODE_ENV, default_host_mode

    add_store_flag(p)
    p.add_argument(
        "--host",
        choices=["auto", "inline"],
        default=default_host_mode(),
        help="auto: attach to the data directory's host, starting one when none runs; inline: "
        f"this process is the host (default: auto, or ${DEFAULT_HOST_MODE_ENV})",
    )
    p.add_argument(
        "--idle-exit",
        type=seconds_arg,
        default=60.0,
        metavar="S",
        help="a host this command starts exits once no front door was attached for S seconds "
        "(default: 60)",
    )
