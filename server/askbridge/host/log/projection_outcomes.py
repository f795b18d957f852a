"""Reading what an ask came to in logged events: a tool/result's outcome (P3), a late
reply's batch (P4). The asks themselves are read in projection_parse.py.

Like every reader of the log, these are total: malformed input yields None (or
`[]` for a reply, P4), never an exception. Answer batches are normalized to the
wire vocabulary (V4): ids are strings, `selected` holds strings. A batch already
in that form is the log's own list, not a copy (`read_answers`): events are
read-only, like the fold's state.

- `read_tool_outcome(event)` — P3: CONTINUED, the answer batch, or None (drop),
  from the kind the result carries (`outcome`, `answers`, `isError`, `error.code`;
  host/log/events.py `tool_result`). Logs written before results carried their
  kind (the previous version's stores) have only the model's text: for a result
  without `outcome` and not an error, that text is read as it was then (`{"pending":
  true}` or an answer batch), so an old store loads into the same view.
- `read_reply(message)` — P4: the batch a late reply answers with (`[]` when none
  is readable), from the `answers` its user/message (or inbox item's message)
  carries since replies carried them (host/log/events.py `user_message`). A reply
  logged before has only the model's text: without `answers`, that text is read
  as it was then, so an old store loads into the same view.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Final, Literal

from askbridge.protocol.errors import ErrorCode

from .events import OUTCOME_ANSWERED, OUTCOME_PENDING
from .projection_parse import json_value

# Answer items in wire form, read-only once read (like projection_parse's Questions).
Answers = list[dict[str, Any]]


class Continued(Enum):
    """P3: the call returned pending or its outcome is unknown; it stays answerable."""

    CONTINUED = "continued"


CONTINUED: Final = Continued.CONTINUED
_OUTCOME_UNKNOWN: Final = str(ErrorCode.TOOL_OUTCOME_UNKNOWN)


_ANSWER_KEYS: Final = ("id", "selected")
_CUSTOM_ANSWER_KEYS: Final = ("id", "selected", "custom")


def read_answers(payload: Any) -> Answers | None:
    """The V4 batch of `{"answers": [...]}`, or None when it is not one.

    A batch already in view form (each item's keys exactly these, in this order: what
    the host logs and renders) is the payload's own list, not a copy: the log's objects
    are read-only like the fold's, and a load keeps every settled batch.
    """
    if not isinstance(payload, dict):  # a lazily loaded event (store/event_rows.py) too
        return None
    raw = payload.get("answers")
    if type(raw) is not list:
        return None
    exact = True
    for answer in raw:
        if type(answer) is not dict:
            return None
        qid, selected, custom = answer.get("id"), answer.get("selected"), answer.get("custom")
        if type(qid) is not str or type(selected) is not list:
            return None
        for label in selected:
            if type(label) is not str:
                return None
        if custom is not None and type(custom) is not str:
            return None
        if exact and tuple(answer) != (_ANSWER_KEYS if custom is None else _CUSTOM_ANSWER_KEYS):
            exact = False
    if exact:
        return raw
    return [
        {"id": item["id"], "selected": item["selected"]}
        if item.get("custom") is None
        else {"id": item["id"], "selected": item["selected"], "custom": item["custom"]}
        for item in raw
    ]


def read_tool_outcome(event: dict[str, Any]) -> Literal[Continued.CONTINUED] | Answers | None:
    """P3: CONTINUED (pending, or outcome unknown), the answer batch, or None (drop the call)."""
    error = event.get("error")
    if error is not None and type(error) is dict and error.get("code") == _OUTCOME_UNKNOWN:
        return CONTINUED  # P7's synthetic result after a crash
    if event.get("isError"):
        return None
    outcome = event.get("outcome")
    if outcome == OUTCOME_ANSWERED:
        return read_answers(event)  # the event's own `answers`, checked like any batch
    if outcome == OUTCOME_PENDING:
        return CONTINUED
    # A result logged before results carried their kind: what its text says (module doc).
    # Here, not in a helper: the fold of an old store pays this for every ask's result.
    payload = json_value(event.get("content"))
    if type(payload) is dict and payload.get("pending") is True:
        return CONTINUED
    return read_answers(payload)


def read_reply(message: dict[str, Any]) -> Answers:
    """P4: a late reply's typed batch (L4), checked like any batch; `[]` when unreadable.

    `message` is a user/message event or an inbox item's message: both carry the
    reply's `content` and, since replies carried it, its `answers`.
    """
    if "answers" in message:
        answers = read_answers(message)
        return answers if answers is not None else []
    return _untyped_reply(message.get("content"))


def _untyped_reply(content: Any) -> Answers:
    """The fallback for a reply logged before replies carried `answers` (old stores only):
    the batch in its text blocks (L4's JSON), or `[]` when none is readable. New events
    are never read this way: their text is rendered from their answers, not parsed back."""
    if not isinstance(content, list):
        return []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "text":
            answers = read_answers(json_value(block.get("text")))
            if answers is not None:
                return answers
    return []
