"""Typed tool outcomes (architecture.md: "Results carry their kind").

A tool call comes to a `ToolOutcome`: answered (with the checked batch),
pending, failed with `{name, code}`, or "done" for any other tool's own text.
`content`, the text the model reads, is rendered here once; `ToolOutcome.event`
logs it beside its kind, so the projection and `askbridge sessions` fold the
kind and never parse the text back (host/log/events.py `tool_result`), and
`ToolOutcome.data` is the same result as the JSON object it was rendered from,
for a door that sends results typed (MCP's `structuredContent`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from askbridge.core import HarnessError, tool_failed
from askbridge.protocol.text import compact_encoder
from askbridge.protocol.vocabulary import Answer, AnswerItem, PendingResult

from ..log import events as ev

# json.dumps with options builds a JSONEncoder per call: this one is built once
# (protocol/text.compact_encoder); NaN allowed, as json.dumps allows it (an MCP tool input).
_COMPACT = compact_encoder(allow_nan=True)


def compact(value: Any) -> str:
    """The compact JSON text a model reads: `json.dumps(value, separators=(",", ":"),
    ensure_ascii=False)`."""
    return _COMPACT(value)


# What a tool call came to: an ask's answer, its pending notice, a failure with its code,
# or "done" for any other tool's own text (delegate, get_answers), which no fold reads.
OutcomeKind = Literal["answered", "pending", "failed", "done"]


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """A tool call's typed outcome and `content`, the text the model reads (rendered once)."""

    content: str
    is_error: bool = False
    error: dict[str, str] | None = None
    kind: OutcomeKind = "done"
    answers: list[dict[str, Any]] | None = None  # answered: the checked batch, wire form
    value: dict[str, Any] | None = None  # pending, done: the object `content` is the text of
    message: str | None = None  # failed: the error's own message, without "Error: "

    @classmethod
    def done(cls, value: dict[str, Any]) -> ToolOutcome:
        """Another tool's result that is a JSON object: the model reads its compact text."""
        return cls(compact(value), value=value)

    @classmethod
    def answered(cls, answer: Answer) -> ToolOutcome:
        """T3: the checked answer batch; the model reads its compact JSON."""
        answers = [wire_item(item) for item in answer.answers]
        return cls(compact({"answers": answers}), kind="answered", answers=answers)

    @classmethod
    def pending(cls, call_id: str, message: str | None = None) -> ToolOutcome:
        """T5 (or, with a door's own message, X2): the question stays answerable."""
        notice = {
            "pending": True,
            "callId": call_id,
            "message": pending_message(call_id) if message is None else message,
        }
        return cls(compact(notice), kind="pending", value=notice)

    @classmethod
    def failure(cls, exc: HarnessError) -> ToolOutcome:
        """T6: `Error: <message>` with structured `{name, code}`."""
        text = f"Error: {exc.message}"
        return cls(text, True, exc.to_data(), kind="failed", message=exc.message)

    def data(self) -> dict[str, Any]:
        """The result as a JSON object: `{"answers": …}`, the pending notice, `{name, code,
        message}` of a failure, another tool's object, or `{"text": …}` of a plain text."""
        if self.kind == "answered":
            return {"answers": self.answers}
        if self.kind == "failed":
            return {**(self.error or {}), "message": self.message}
        return {"text": self.content} if self.value is None else self.value

    def event(self, call_id: str, name: str) -> ev.Event:
        """The `tool/result` that records this outcome, its kind and answers included."""
        return ev.tool_result(
            call_id,
            name,
            self.content,
            is_error=self.is_error,
            error=self.error,
            outcome=self.kind,
            answers=self.answers,
        )


def wire_item(item: AnswerItem) -> dict[str, Any]:
    """`item.dump()`, built straight from the checked item: a pydantic round trip per
    question was a visible share of a question's CPU."""
    wire: dict[str, Any] = {"id": item.id, "selected": list(item.selected)}
    if item.custom is not None:
        wire["custom"] = item.custom
    return wire


def pending_message(call_id: str) -> str:
    """T5: what the model is told when a timed question is still open."""
    return (
        "No answer batch arrived before the timeout. This is pending, not a skipped answer: "
        "continue with useful work that does not depend on it. The user can still answer; the "
        "reply will arrive later as a user message identified as answer_to_pending_question with "
        f"callId {call_id} and the original questions. Do not treat this as permission."
    )


class Resume:
    """The core's callback for one started call: its outcome, typed, to `done` (a record
    rather than a closure: it lives as long as the question waits)."""

    __slots__ = ("_call_id", "_done")

    def __init__(self, call_id: str, done: Callable[[str, ToolOutcome], None]) -> None:
        self._call_id, self._done = call_id, done

    def __call__(self, result: Answer | PendingResult | None, error: Exception | None) -> None:
        self._done(self._call_id, outcome_of(self._call_id, result, error))


def outcome_of(
    call_id: str, result: Answer | PendingResult | None, error: Exception | None
) -> ToolOutcome:
    if error is not None:
        return ToolOutcome.failure(error if isinstance(error, HarnessError) else tool_failed(error))
    if isinstance(result, PendingResult):
        return ToolOutcome.pending(call_id)
    assert isinstance(result, Answer)
    return ToolOutcome.answered(result)
