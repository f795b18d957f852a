"""Who a question is for (R2): everyone, a person or a role, and the people a team has (R1).

An audience is one or more targets: a routed question starts with one, and each
escalation step (R3) adds a wider one, so nobody who could see the question before
loses it. `People` is the team as the policy needs it: each person's roles.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import IntEnum


class Reach(IntEnum):
    """How wide a target is; escalation only goes up (R3: person → role → everyone)."""

    PERSON = 1
    ROLE = 2
    EVERYONE = 3


@dataclass(frozen=True, slots=True)
class Target:
    reach: Reach
    name: str = ""

    def __str__(self) -> str:
        if self.reach is Reach.EVERYONE:
            return "everyone"
        return f"{self.reach.name.lower()}:{self.name}"


EVERYONE = Target(Reach.EVERYONE)


def parse_target(text: str) -> Target:
    """`everyone`, `person:NAME` or `role:NAME`; ValueError says what is wrong."""
    if text == "everyone":
        return EVERYONE
    prefix, sep, name = text.partition(":")
    if not sep or prefix not in ("person", "role") or not name:
        raise ValueError('must be "everyone", "person:NAME" or "role:NAME"')
    return Target(Reach.PERSON if prefix == "person" else Reach.ROLE, name)


@dataclass(frozen=True, slots=True)
class People:
    """Each person's roles (R1); solo use is one person without roles."""

    roles_of: Mapping[str, frozenset[str]]

    @classmethod
    def of(cls, roles_of: Mapping[str, Iterable[str]]) -> People:
        return cls({person: frozenset(roles) for person, roles in roles_of.items()})

    def members(self, role: str) -> frozenset[str]:
        return frozenset(p for p, roles in self.roles_of.items() if role in roles)

    def __contains__(self, person: object) -> bool:
        return person in self.roles_of


@dataclass(frozen=True, slots=True)
class Audience:
    """The targets a question reaches, narrowest first."""

    targets: tuple[Target, ...]

    @property
    def everyone(self) -> bool:
        return any(t.reach is Reach.EVERYONE for t in self.targets)

    @property
    def widest(self) -> Reach:
        return max(t.reach for t in self.targets)

    def widened(self, target: Target) -> Audience:
        """This audience and `target`: everyone who saw the question still does."""
        if target.reach is Reach.EVERYONE:
            return Audience((EVERYONE,))
        if target in self.targets:
            return self
        return Audience((*self.targets, target))

    def reaches(self, person: str, people: People) -> bool:
        if self.everyone:
            return True
        roles = people.roles_of.get(person, frozenset())
        for target in self.targets:
            if target.reach is Reach.PERSON and target.name == person:
                return True
            if target.reach is Reach.ROLE and target.name in roles:
                return True
        return False

    def members(self, people: People) -> frozenset[str] | None:
        """The people it reaches; None for everyone (whoever joins the team later too)."""
        if self.everyone:
            return None
        return frozenset(p for p in people.roles_of if self.reaches(p, people))

    def __str__(self) -> str:
        return " + ".join(str(t) for t in self.targets)


TO_EVERYONE = Audience((EVERYONE,))
