"""What a policy may look at (R2): the session's facts and the question's, never the model's say.

A route in a tool call's arguments is not a fact here: the host builds these records
from what it knows of the session and from the question's shape (its intent kind and
its text), so nothing the model writes can pick its own audience.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from askbridge.core.question import Question
from askbridge.protocol.vocabulary import ApprovalIntent, PlanReviewIntent


class IntentKind(StrEnum):
    """V3's intent kinds, and `plain` for a question without an intent."""

    APPROVAL = "approval"
    PLAN_REVIEW = "plan-review"
    PLAIN = "plain"


@dataclass(frozen=True, slots=True)
class SessionFacts:
    """The session a question comes from. A fact the host does not know is None, and no
    pattern matches a missing fact (a rule on `repository` skips a session outside one).

    `agent` is the agent's name (an MCP client's `clientInfo.name`, the hosted agent's
    name), `origin` how the session began ("root" for askbridge's own agent, "mcp" for an
    external one, X1)."""

    agent: str | None = None
    title: str | None = None
    cwd: str | None = None
    repository: str | None = None
    origin: str | None = None


@dataclass(frozen=True, slots=True)
class AskedQuestion:
    """One question of a call: its id, its text and its option labels (V1, V2)."""

    id: str
    text: str
    options: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class QuestionFacts:
    """One call's questions, in ask order, and what its intent says (V3).

    `approve` and `reject` are an approval's labels (`approve` alone for a plan review);
    `timed` is whether the ask is a timed wait, the only kind that can go pending (V6)."""

    kind: IntentKind
    questions: tuple[AskedQuestion, ...]
    approve: str | None = None
    reject: str | None = None
    timed: bool = False

    @classmethod
    def of(cls, questions: Sequence[Question], *, timed: bool = False) -> QuestionFacts:
        """The facts of a call as the core holds its questions. An approval or a plan review
        is one question (V3); a batch's kind is its first intent's."""
        asked = tuple(
            AskedQuestion(q.id, q.question, tuple(o.label for o in q.options or ()))
            for q in questions
        )
        intent = next((q.intent for q in questions if q.intent is not None), None)
        if isinstance(intent, ApprovalIntent):
            return cls(IntentKind.APPROVAL, asked, intent.approve, intent.reject, timed)
        if isinstance(intent, PlanReviewIntent):
            return cls(IntentKind.PLAN_REVIEW, asked, intent.approve, None, timed)
        return cls(IntentKind.PLAIN, asked, None, None, timed)
