"""The user-questions vocabulary of behavior.md section V, as pydantic models.

These shapes travel unchanged between the model's tool call, the core, every
front door and every client: Option (V1), QuestionItem (V2), the intents (V3),
Answer (V4), Wait (V5), PendingResult (V6) and the projection view (V7).
Structural problems are pydantic validation errors; the semantic intent rules
of V3 are checked by `askbridge.core.validation` so that they surface as
BAD_INTENT with the exact messages of behavior.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal, Protocol

from pydantic import Discriminator, Field, Tag

from .base import WireModel

NonEmptyStr = Annotated[str, Field(min_length=1)]


class Option(WireModel):
    """V1: `label` is both the UI text and the value the model gets back."""

    label: NonEmptyStr
    description: str | None = None


class IntentSubject(WireModel):
    name: str
    icon: str | None = None


class PlanReviewIntent(WireModel):
    """V3 plan-review: `approve` names one option; the question carries the plan as detail."""

    kind: Literal["plan-review"] = "plan-review"
    approve: str
    call_id: str | None = None


class ApprovalIntent(WireModel):
    """V3 approval: a single, non-multi-select, non-timed question with detail."""

    kind: Literal["approval"] = "approval"
    approve: str
    reject: str
    always: str | None = None
    subject: IntentSubject | None = None
    display: dict[str, dict[str, str]] | None = None


class UnknownIntent(WireModel):
    """An intent whose kind askbridge does not know; the core rejects it with BAD_INTENT (V3)."""

    kind: str


def _intent_tag(value: Any) -> str:
    kind = value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)
    return kind if kind in ("plan-review", "approval") else "unknown"


Intent = Annotated[
    Annotated[PlanReviewIntent, Tag("plan-review")]
    | Annotated[ApprovalIntent, Tag("approval")]
    | Annotated[UnknownIntent, Tag("unknown")],
    Discriminator(_intent_tag),
]


class _Labelled(Protocol):
    @property
    def label(self) -> str: ...


class _Readable(Protocol):
    @property
    def multi_select(self) -> bool | None: ...
    @property
    def options(self) -> Sequence[_Labelled] | None: ...


class QuestionReading:
    """What every question type reads the same way: this model and the core's plain record
    (core/question.py), which the checks and the doors take alike."""

    __slots__ = ()

    @property
    def is_multi(self: _Readable) -> bool:
        return bool(self.multi_select)

    def option_labels(self: _Readable) -> list[str]:
        return [o.label for o in self.options or ()]


class QuestionItem(WireModel, QuestionReading):
    """V2: `id` is caller-chosen and echoed in the answer; `detail` is markdown, never an option."""

    id: NonEmptyStr
    question: str
    detail: str | None = None
    header: str | None = None
    options: list[Option] | None = None
    multi_select: bool | None = None
    intent: Intent | None = None


class AnswerItem(WireModel):
    """V4: one item per question id. Empty `selected` and no `custom` is a skipped question."""

    id: str
    selected: list[str] = Field(default_factory=list)
    custom: str | None = None


class Answer(WireModel):
    """V4 Answer: `{answers: [...]}`."""

    answers: list[AnswerItem]


class Wait(WireModel):
    """V5: `{callId}` (indefinite) or `{callId, timed: true}` (foreground timed wait)."""

    call_id: str
    timed: bool | None = None


class PendingResult(WireModel):
    """V6: the question is still answerable; never an empty answer or a permission."""

    pending: Literal[True] = True
    call_id: str


TimedResult = Answer | PendingResult


class ActiveQuestion(WireModel):
    call_id: str
    questions: list[QuestionItem]
    state: Literal["open", "continued"]


class SettledQuestion(WireModel):
    call_id: str
    answers: list[AnswerItem]


class ProjectionView(WireModel):
    """V7: `active` in ask order, `settled` in settlement order."""

    active: list[ActiveQuestion] = Field(default_factory=list)
    settled: list[SettledQuestion] = Field(default_factory=list)


class WaitFrame(WireModel):
    """C3: the one frame a claim stream yields."""

    remaining_ms: int
