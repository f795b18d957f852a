"""What `askbridge serve` and `askbridge acp` share at start-up: the flags, turned into a store
and a Host's settings (protocol.md "Command line").

Kept here, light and argparse-agnostic beyond attribute names, so that both front
doors use one reading of the flags without importing each other.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from askbridge.protocol.defaults import (
    ASK_MODE_DEFAULT,
    ASK_TIMEOUT_DEFAULT_SECONDS,
    MAX_TURN_REQUESTS_DEFAULT,
)

from .store.datadir import open_store, resolve_data_dir
from .store.store_api import StoreError

if TYPE_CHECKING:
    from .store.store_api import EventStore


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
        )


def open_data_store(data_dir_arg: str | None) -> EventStore | None:
    """The store of --data-dir (`data_dir_arg`, None when not given), or None after
    printing why it cannot be used (exit 1).

    "Why" is the StoreError's one line (datadir.py): in use by another process
    (also one that still holds a deleted or replaced directory), not private
    (S5), a symbolic link where the lock or database should be, damaged (S6),
    from a newer askbridge, or a filesystem that refuses writes.
    """
    try:
        return open_store(resolve_data_dir(data_dir_arg))
    except StoreError as exc:
        print(f"askbridge: {exc}", file=sys.stderr)
        return None


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
    a front door's `max_turn_requests`) is taken whole; `ask_user_question` field by
    field. The one merge every door uses."""
    out: dict[str, Any] = {}
    ask: dict[str, Any] = {}
    for layer in layers:
        for key in ("model", "max_turn_requests"):
            if layer.get(key) is not None:
                out[key] = layer[key]
        ask.update(layer.get("ask_user_question") or {})
    if ask:
        out["ask_user_question"] = ask
    return out
