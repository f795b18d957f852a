"""Counting an approval's votes (R4): k distinct approvals settle it, one rejection rejects.

Each vote is an event the host records; this tally is what they add up to. Only the
role's people vote; a person's first vote is their vote (the store keeps one per
person, atomically across hosts), so a second one, either way, counts for nothing.
Once settled, the tally takes no more votes. The agent sees one answer (the
approval's approve or reject label) and history names the voters (R6).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from .decisions import AnswerItem
from .facts import QuestionFacts
from .policy import Quorum


class Vote(StrEnum):
    APPROVE = "approve"
    REJECT = "reject"


class Counted(StrEnum):
    """What became of one vote."""

    COUNTED = "counted"
    AGAIN = "again"  # this person already voted; the first vote stands
    NOT_A_VOTER = "not-a-voter"  # not one of the role's people
    CLOSED = "closed"  # the question is already settled


class Outcome(StrEnum):
    OPEN = "open"
    APPROVED = "approved"
    REJECTED = "rejected"


@dataclass(frozen=True, slots=True)
class Settlement:
    """The one answer a settled quorum gives, and the people it names (R6)."""

    outcome: Outcome
    voters: tuple[str, ...]

    def items(self, question: QuestionFacts) -> tuple[AnswerItem, ...]:
        """The approval answered with its approve or reject label (V3)."""
        label = question.approve if self.outcome is Outcome.APPROVED else question.reject
        assert label is not None, "a quorum rule matches approvals only"
        return tuple(AnswerItem(q.id, (label,)) for q in question.questions)


class QuorumTally:
    def __init__(self, quorum: Quorum, votes: Iterable[tuple[str, Vote]] = ()) -> None:
        """A tally for `quorum`, replaying the votes already recorded (in their order)."""
        self.quorum = quorum
        self._votes: dict[str, Vote] = {}
        self._settlement: Settlement | None = None
        for person, vote in votes:
            self.vote(person, vote)

    def vote(self, person: str, vote: Vote) -> Counted:
        if self._settlement is not None:
            return Counted.CLOSED
        if person not in self.quorum.members:
            return Counted.NOT_A_VOTER
        if person in self._votes:
            return Counted.AGAIN
        self._votes[person] = vote
        if vote is Vote.REJECT:
            self._settlement = Settlement(Outcome.REJECTED, (person,))
        elif len(self.approvals) >= self.quorum.needed:
            self._settlement = Settlement(Outcome.APPROVED, self.approvals)
        return Counted.COUNTED

    @property
    def approvals(self) -> tuple[str, ...]:
        """Who approved, in the order they voted."""
        return tuple(p for p, v in self._votes.items() if v is Vote.APPROVE)

    @property
    def outcome(self) -> Outcome:
        return Outcome.OPEN if self._settlement is None else self._settlement.outcome

    @property
    def settlement(self) -> Settlement | None:
        """The answer, once the votes settled it; None while it is open."""
        return self._settlement

    def __str__(self) -> str:
        """The votes so far, as a card shows them: "1 of 2 of role:leads: alice"."""
        names = ", ".join(self.approvals) or "no approvals yet"
        return f"{len(self.approvals)} of {self.quorum}: {names}"
