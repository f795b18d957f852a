"""What a policy does with one question (R2–R5): `decide(policy, session, question)`.

A `Decision` says who sees the question first, how its audience widens (R3), whether
a quorum settles it (R4) and what a rule answers by itself (R5), with the rule that
said so. With no rule matching, the question goes to everyone and nothing answers
it by itself: nothing but a rule a person wrote ever allows (X5). A rule's fixed
answer is built here for this question, and only from its own options: a label the
question does not offer leaves the question to people, never to a made-up answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from .audience import TO_EVERYONE, Audience
from .durations import format_duration
from .facts import IntentKind, QuestionFacts, SessionFacts
from .policy import EscalationStep, Policy, Quorum, Rule


@dataclass(frozen=True, slots=True)
class AnswerItem:
    """V4's answer item, as a rule gives it."""

    id: str
    selected: tuple[str, ...] = ()
    custom: str | None = None

    def dump(self) -> dict[str, Any]:
        item: dict[str, Any] = {"id": self.id, "selected": list(self.selected)}
        if self.custom is not None:
            item["custom"] = self.custom
        return item


class AutoKind(StrEnum):
    ANSWER = "answer"  # the rule's option, at once
    PENDING = "pending"  # pending at once to a timed ask (V6); people may still answer
    DENY = "deny"  # no, after `after_ms` with no human answer


@dataclass(frozen=True, slots=True)
class AutoAnswer:
    """What a rule answers by itself; it races people through first-answer-wins (R5)."""

    kind: AutoKind
    rule: str
    after_ms: float = 0.0
    items: tuple[AnswerItem, ...] = ()

    @property
    def provenance(self) -> str:
        """Who settled it, for history (R6)."""
        return f"policy:{self.rule}"


@dataclass(frozen=True, slots=True)
class Decision:
    rule: Rule | None
    audience: Audience
    escalation: tuple[EscalationStep, ...] = ()
    quorum: Quorum | None = None
    auto: tuple[AutoAnswer, ...] = ()
    note: str | None = None  # why a rule's own answer was not used for this question

    def auto_of(self, kind: AutoKind) -> AutoAnswer | None:
        return next((a for a in self.auto if a.kind is kind), None)

    @property
    def reason(self) -> str:
        """Why the question is where it is, for `host --status` and the page (R2)."""
        if self.rule is None:
            return "no rule matched: to everyone, answered only by people"
        parts = [f"rule {self.rule.name} (line {self.rule.line}): to {self.audience}"]
        parts += [f"then {s.target} after {format_duration(s.after_ms)}" for s in self.escalation]
        if self.quorum is not None:
            parts.append(f"needs {self.quorum}")
        for auto in self.auto:
            after = f" after {format_duration(auto.after_ms)}" if auto.after_ms else ""
            parts.append(f"{auto.kind.value}{after}")
        if self.note:
            parts.append(self.note)
        return "; ".join(parts)


NO_RULE = Decision(None, TO_EVERYONE)


def decide(policy: Policy, session: SessionFacts, question: QuestionFacts) -> Decision:
    """The first matching rule's decision for this question, or the default (X5)."""
    rule = policy.first_match(session, question)
    if rule is None:
        return NO_RULE
    auto: list[AutoAnswer] = []
    note = None
    if rule.answer is not None:
        items = fixed_items(rule.answer, question)
        if items is None:
            note = f"its answer {rule.answer!r} is not an option of every question here"
        else:
            auto.append(AutoAnswer(AutoKind.ANSWER, rule.name, 0.0, items))
    if rule.pending:
        if question.timed:
            auto.append(AutoAnswer(AutoKind.PENDING, rule.name))
        else:
            note = "pending does not apply: only a timed ask can be pending"
    if rule.deny_after_ms is not None:
        items = deny_items(rule, question)
        auto.append(AutoAnswer(AutoKind.DENY, rule.name, rule.deny_after_ms, items))
    return Decision(rule, Audience((rule.route,)), rule.escalate, rule.quorum, tuple(auto), note)


def fixed_items(label: str, question: QuestionFacts) -> tuple[AnswerItem, ...] | None:
    """`label` picked on every question of the call, or None when one does not offer it."""
    items = []
    for asked in question.questions:
        if label not in asked.options:
            return None
        items.append(AnswerItem(asked.id, (label,)))
    return tuple(items) or None


def deny_items(rule: Rule, question: QuestionFacts) -> tuple[AnswerItem, ...]:
    """No: an approval's reject label; elsewhere, each question answered with a text that
    says so, which no reader takes for a choice, let alone a permission (X5)."""
    if question.kind is IntentKind.APPROVAL and question.reject is not None:
        return tuple(AnswerItem(a.id, (question.reject,)) for a in question.questions)
    assert rule.deny_after_ms is not None
    text = (
        f"Denied by policy:{rule.name}: nobody answered within"
        f" {format_duration(rule.deny_after_ms)}."
    )
    return tuple(AnswerItem(a.id, (), text) for a in question.questions)
