"""A loaded policy (R5): ordered rules, each a match and what it does, first match wins.

First match wins, as in a firewall: a reader finds what happens to a question by
reading down to the first rule that matches it, and a narrow rule goes above a broad
one. No rule matching means everyone sees the question and nothing answers it by
itself: only a rule a person wrote ever allows (X5).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .audience import People, Target
from .facts import IntentKind, QuestionFacts, SessionFacts
from .patterns import GlobSet

# The session facts a rule can match on (R2), in the order a rule checks them.
SESSION_FIELDS = ("origin", "agent", "repository", "cwd", "title")


# One session condition as evaluation reads it: the fact's index in `session_values`, and
# the glob set's literals, prefixes and regex (patterns.py), unpacked: a new session checks
# every rule's conditions, and a condition costs no method call of its own.
Check = tuple[int, frozenset[str], tuple[str, ...], "re.Pattern[str] | None"]


def session_values(session: SessionFacts) -> tuple[str | None, ...]:
    """The facts in SESSION_FIELDS order, as `Check` indexes them."""
    return (session.origin, session.agent, session.repository, session.cwd, session.title)


def holds(checks: tuple[Check, ...], values: tuple[str | None, ...]) -> bool:
    """Whether every check holds for `session_values(session)`; a missing fact fails one."""
    for index, literals, prefixes, regex in checks:
        value = values[index]
        if value is None:
            return False
        if value in literals or value.startswith(prefixes):
            continue
        if regex is None or regex.match(value) is None:
            return False
    return True


@dataclass(frozen=True, slots=True)
class Match:
    """All of its conditions hold; a rule without conditions matches every question."""

    session: tuple[tuple[str, GlobSet], ...] = ()
    kinds: frozenset[IntentKind] | None = None
    text: re.Pattern[str] | None = None
    checks: tuple[Check, ...] = ()

    @classmethod
    def of(
        cls,
        session: dict[str, GlobSet],
        kinds: frozenset[IntentKind] | None,
        text: re.Pattern[str] | None,
    ) -> Match:
        ordered = tuple((f, session[f]) for f in SESSION_FIELDS if f in session)
        checks = tuple(
            (SESSION_FIELDS.index(f), g.literals, g.prefixes, g.regex) for f, g in ordered
        )
        return cls(ordered, kinds, text, checks)

    def holds_for(self, values: tuple[str | None, ...]) -> bool:
        """Whether the session conditions hold for `session_values(session)`."""
        return holds(self.checks, values)

    def matches(self, session: SessionFacts, question: QuestionFacts) -> bool:
        """This one rule's match, read plainly (`Policy.first_match` is the fast reading)."""
        if self.kinds is not None and question.kind not in self.kinds:
            return False
        if not self.holds_for(session_values(session)):
            return False
        text = self.text
        return text is None or any(text.search(q.text) is not None for q in question.questions)


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


# How many sessions' narrowed rules a policy keeps; past it, it starts again (a host has
# far fewer sessions asking at once).
SESSIONS_KEPT = 4096


@dataclass(frozen=True, slots=True)
class Policy:
    """The rules of one file, in order, and the people they were checked against."""

    source: str
    rules: tuple[Rule, ...]
    people: People
    # A session's facts do not depend on its questions: the rules whose session conditions
    # hold are found once per distinct facts, and each question reads only those.
    by_session: dict[SessionFacts, tuple[Rule, ...]] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )
    # Each distinct set of session conditions once, and each rule's: rules often share
    # theirs (a block of rules for one repository), and a new session checks each set once.
    conditions: tuple[tuple[Check, ...], ...] = field(init=False, compare=False, repr=False)
    condition_of: tuple[int, ...] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        index: dict[tuple[Check, ...], int] = {}
        condition_of = tuple(index.setdefault(r.match.checks, len(index)) for r in self.rules)
        object.__setattr__(self, "conditions", tuple(index))
        object.__setattr__(self, "condition_of", condition_of)

    def rules_for(self, session: SessionFacts) -> tuple[Rule, ...]:
        """The rules, in order, whose session conditions hold for `session`."""
        rules = self.by_session.get(session)
        if rules is None:
            values = session_values(session)
            passed = [holds(checks, values) for checks in self.conditions]
            kept = zip(self.rules, self.condition_of, strict=True)
            rules = tuple([rule for rule, condition in kept if passed[condition]])
            if len(self.by_session) >= SESSIONS_KEPT:
                self.by_session.clear()
            self.by_session[session] = rules
        return rules

    def first_match(self, session: SessionFacts, question: QuestionFacts) -> Rule | None:
        """The first rule that matches: of the session's rules, the first whose kind and
        text conditions hold. Written out flat, with no call per rule but a regex search:
        it runs for every question (benchmarks/bench_policy.py)."""
        kind = question.kind
        for rule in self.rules_for(session):
            match = rule.match
            if match.kinds is not None and kind not in match.kinds:
                continue
            text = match.text
            if text is None:
                return rule
            for asked in question.questions:
                if text.search(asked.text) is not None:
                    return rule
        return None


def empty_policy(people: People) -> Policy:
    """No policy file: every question to everyone, nothing answered by a rule (X5)."""
    return Policy("", (), people)
