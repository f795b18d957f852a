"""A loaded policy (R5): ordered rules, each a match and what it does, first match wins.

First match wins, as in a firewall: a reader finds what happens to a question by
reading down to the first rule that matches it, and a narrow rule goes above a broad
one. No rule matching means everyone sees the question and nothing answers it by
itself: only a rule a person wrote ever allows (X5).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter

from .audience import People, Target
from .facts import IntentKind, QuestionFacts, SessionFacts
from .patterns import GlobSet

# The session facts a rule can match on (R2), in the order a rule checks them.
SESSION_FIELDS = ("origin", "agent", "repository", "cwd", "title")


@dataclass(frozen=True, slots=True)
class Match:
    """All of its conditions hold; a rule without conditions matches every question."""

    session: tuple[tuple[str, GlobSet], ...] = ()
    kinds: frozenset[IntentKind] | None = None
    text: re.Pattern[str] | None = None
    # One getter per session condition, built once: evaluation runs per question.
    getters: tuple[tuple[Callable[[SessionFacts], str | None], GlobSet], ...] = ()

    @classmethod
    def of(
        cls,
        session: dict[str, GlobSet],
        kinds: frozenset[IntentKind] | None,
        text: re.Pattern[str] | None,
    ) -> Match:
        ordered = tuple((f, session[f]) for f in SESSION_FIELDS if f in session)
        getters = tuple((attrgetter(f), globs) for f, globs in ordered)
        return cls(ordered, kinds, text, getters)

    def matches(self, session: SessionFacts, question: QuestionFacts) -> bool:
        """Cheapest first: the kind (a set lookup), the session's globs, then the text
        (a regex search over each question until one matches)."""
        if self.kinds is not None and question.kind not in self.kinds:
            return False
        for get, globs in self.getters:
            if not globs.matches(get(session)):
                return False
        if self.text is None:
            return True
        search = self.text.search
        for asked in question.questions:
            if search(asked.text) is not None:
                return True
        return False


@dataclass(frozen=True, slots=True)
class EscalationStep:
    """R3: `after_ms` from the ask, the audience widens to include `target`."""

    after_ms: float
    target: Target


@dataclass(frozen=True, slots=True)
class Quorum:
    """R4: `needed` distinct approvals from `members` (the role's people) settle an approval."""

    needed: int
    role: str
    members: frozenset[str]

    def __str__(self) -> str:
        return f"{self.needed} of role:{self.role}"


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule as written: its match, its audience and what it may answer by itself.

    `answer` names the option a fixed auto-answer picks, `pending` returns pending at once
    to a timed ask, `deny_after_ms` denies when no human answered in that time."""

    name: str
    line: int
    match: Match
    route: Target
    escalate: tuple[EscalationStep, ...] = ()
    quorum: Quorum | None = None
    answer: str | None = None
    pending: bool = False
    deny_after_ms: float | None = None

    @property
    def provenance(self) -> str:
        """Who settled a question this rule answered (R6)."""
        return f"policy:{self.name}"


@dataclass(frozen=True, slots=True)
class Policy:
    """The rules of one file, in order, and the people they were checked against."""

    source: str
    rules: tuple[Rule, ...]
    people: People

    def first_match(self, session: SessionFacts, question: QuestionFacts) -> Rule | None:
        for rule in self.rules:
            if rule.match.matches(session, question):
                return rule
        return None


def empty_policy(people: People) -> Policy:
    """No policy file: every question to everyone, nothing answered by a rule (X5)."""
    return Policy("", (), people)
