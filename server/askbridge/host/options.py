"""What `askbridge serve` and `askbridge acp` share at start-up: the flags, turned into a Host's
settings (protocol.md "Command line"); the store is opened by `datadir.open_checked`
(daemon/inline.py), which imports none of this before the first answer.

Kept here, light and argparse-agnostic beyond attribute names, so that both front
doors use one reading of the flags without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from askbridge.protocol.defaults import (
    ASK_MODE_DEFAULT,
    ASK_TIMEOUT_DEFAULT_SECONDS,
    MAX_TURN_REQUESTS_DEFAULT,
)


def _default_ask() -> dict[str, Any]:
    return {"mode": ASK_MODE_DEFAULT, "timeout": ASK_TIMEOUT_DEFAULT_SECONDS}


@dataclass(frozen=True)
class HostSettings:
    """A Host's session defaults: the layer below every client's defaults and a session's
    own settings. One typed object from the command line to `Host`, where a dict of
    keyword arguments used to travel through the daemon's layers."""

    model: dict[str, Any] | None = None  # a ModelSpec; None: no model (UnconfiguredModel)
    ask_user_question: dict[str, Any] = field(default_factory=_default_ask)  # {mode, timeout}
    max_turn_requests: int = MAX_TURN_REQUESTS_DEFAULT
    delegation: dict[str, int] | None = None  # S16: --delegation-limits; None: the defaults

    @classmethod
    def over_defaults(cls, given: dict[str, Any]) -> HostSettings:
        """`given`, a session-settings layer (`{model?, ask_user_question?,
        max_turn_requests?}`: the front door's flags, `daemon.front.door_defaults`), over
        the defaults; `ask_user_question` field by field, as `merge_settings` merges."""
        merged = merge_settings({"ask_user_question": _default_ask()}, given)
        return cls(
            model=merged.get("model"),
            ask_user_question=merged["ask_user_question"],
            max_turn_requests=merged.get("max_turn_requests", MAX_TURN_REQUESTS_DEFAULT),
            delegation=merged.get("delegation"),
        )


def session_settings(model: Any, ask: Any) -> dict[str, Any]:
    """`{model?, ask_user_question?}` from the wire models a client sent (only what it gave).

    `ask` keeps only the fields the client set, so merging field by field works:
    `{timeout: 30}` keeps the mode from the layer below.
    """
    out: dict[str, Any] = {}
    if model is not None:
        out["model"] = model.model_dump(mode="json", by_alias=True, exclude_none=True)
    if ask is not None:
        out["ask_user_question"] = ask.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return out


def merge_settings(*layers: dict[str, Any]) -> dict[str, Any]:
    """Session settings, later layers over earlier ones: the flags, a client's defaults
    (`initializationOptions`), `session/new` (or ACP `_meta.askbridge`). The model (and
    a front door's `max_turn_requests` and `delegation`) is taken whole;
    `ask_user_question` field by field. The one merge every door uses."""
    out: dict[str, Any] = {}
    ask: dict[str, Any] = {}
    for layer in layers:
        for key in ("model", "max_turn_requests", "delegation"):
            if layer.get(key) is not None:
                out[key] = layer[key]
        ask.update(layer.get("ask_user_question") or {})
    if ask:
        out["ask_user_question"] = ask
    return out
