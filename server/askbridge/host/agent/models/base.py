"""What the turn loop needs from a model: one request in, one response out.

The loop logs a `request/header` (the tool schemas the model saw) before each
request, so `request_index` — the number of model requests the session made
before this one — is a fold of the log. The script model uses it as its
position, which is why a restarted session takes the next unused step.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from askbridge.core.errors import ModelError

from ...log.events import Event

__all__ = [
    "MAX_MODEL_REPLY_BYTES",
    "Model",
    "ModelError",
    "ModelResponse",
    "ToolCallRequest",
    "reply_too_big",
]

# S7: nothing over 8 MiB reaches a client, the limit it is held to (jsonrpc's MAX_BODY); an
# endpoint's reply is not read past it (S18).
MAX_MODEL_REPLY_BYTES = 8 * 1024 * 1024


def reply_too_big(size: int, *, more: bool = False) -> ModelError:
    """S7's MODEL_ERROR; `more`: the size is where reading stopped, not the whole reply's."""
    has = f"more than {size}" if more else str(size)
    return ModelError(f"the model's reply has {has} bytes; at most 8 MiB")


@dataclass(frozen=True)
class ToolCallRequest:
    id: str
    name: str
    arguments: Any


@dataclass(frozen=True)
class ModelResponse:
    text: str = ""
    tool_calls: list[ToolCallRequest] = field(default_factory=list)
    # The reply passed every check of model_output.py unchanged when its model was built
    # (a script's fixed steps): the turn loop does not walk it again on every request.
    # A verdict on the content, not content: equal replies are equal either way.
    checked: bool = field(default=False, compare=False)


# The shapes of `Model.complete`'s arguments, named once for every adapter's signature.
History = Sequence[Event]  # the session's events so far
Tools = Sequence[dict[str, Any]]  # the tool definitions the model may call


class Model(Protocol):
    """A model may say `reads_history = False` (the script, whose position is
    `request_index`): the turn loop then passes an empty `history` instead of reading the
    session's log from the store for every request; and `never_waits = True` when
    `complete` returns without waiting for anything (the turn loop then spares it the
    cancel scope that lets a turn's abort cut a request off)."""

    async def complete(self, history: History, tools: Tools, request_index: int) -> ModelResponse:
        """Answer the conversation in `history` (the session's events so far)."""
        ...
