"""One rule's fields, read and checked (R2–R5): its match and what it does.

Each reader raises `FieldError` with the path of the offending value inside the rule
(`("match", "kind", 1)`), which policy_file.py turns into the file's line.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from askbridge.protocol.text import visible

from .audience import People, Reach, Target, parse_target
from .durations import parse_duration
from .facts import IntentKind
from .patterns import GlobSet, compile_text
from .policy import SESSION_FIELDS, EscalationStep, Match, Quorum

Path = tuple[str | int, ...]
MATCH_FIELDS = (*SESSION_FIELDS, "kind", "text")
_QUORUM = re.compile(r"([0-9]{1,4}) of role:(.+)")


class FieldError(Exception):
    def __init__(self, path: Path, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


def shown(value: str) -> str:
    """`value` quoted on one line, with nothing in it that could drive a terminal (S17)."""
    return json.dumps(visible(value), ensure_ascii=False)


def type_name(value: Any) -> str:
    """What a TOML value is, for a message: "a string", "an array", …"""
    if isinstance(value, bool):
        return "a boolean"
    names = {str: "a string", int: "an integer", float: "a number", dict: "a table"}
    for kind, name in names.items():
        if isinstance(value, kind):
            return name
    return "an array" if isinstance(value, list) else "a date or time"


def _string(path: Path, value: Any, what: str = "a string") -> str:
    if not isinstance(value, str):
        raise FieldError(path, f"{path[-1]} must be {what}, not {type_name(value)}")
    return value


def _strings(path: Path, value: Any) -> list[str]:
    """A string, or a non-empty array of strings (any of them)."""
    if isinstance(value, str):
        return [value]
    what = "a string or an array of strings"
    if not isinstance(value, list):
        raise FieldError(path, f"{path[-1]} must be {what}, not {type_name(value)}")
    if not value:
        raise FieldError(path, f"{path[-1]} is an empty array: it would match nothing")
    for index, item in enumerate(value):
        if not isinstance(item, str):
            raise FieldError((*path, index), f"{path[-1]} must be {what}; item {index + 1} is"
                             f" {type_name(item)}")  # fmt: skip
    return value


def read_match(value: Any) -> Match:
    path: Path = ("match",)
    if not isinstance(value, dict):
        raise FieldError(path, f"match must be a table, not {type_name(value)}")
    for key in value:
        if key not in MATCH_FIELDS:
            fields = ", ".join(MATCH_FIELDS)
            raise FieldError((*path, key), f"match: unknown field {shown(key)} (fields: {fields})")
    session = {f: GlobSet.of(_strings((*path, f), value[f])) for f in SESSION_FIELDS if f in value}
    kinds = None
    if "kind" in value:
        names = _strings((*path, "kind"), value["kind"])
        known = {k.value: k for k in IntentKind}
        for index, name in enumerate(names):
            if name not in known:
                at = (*path, "kind") if isinstance(value["kind"], str) else (*path, "kind", index)
                raise FieldError(at, f"kind {shown(name)} is not one of {', '.join(known)}")
        kinds = frozenset(known[n] for n in names)
    text = None
    if "text" in value:
        pattern = _string((*path, "text"), value["text"], "a string (a regex)")
        try:
            text = compile_text(pattern)
        except re.error as exc:
            raise FieldError((*path, "text"), f"text is not a valid regex: {exc}") from None
    return Match.of(session, kinds, text)


@dataclass(frozen=True, slots=True)
class Actions:
    route: Target | None = None
    escalate: tuple[EscalationStep, ...] = ()
    quorum: Quorum | None = None
    answer: str | None = None
    pending: bool = False
    deny_after_ms: float | None = None


def _target(path: Path, value: Any, people: People) -> Target:
    text = _string(path, value)
    try:
        target = parse_target(text)
    except ValueError as exc:
        raise FieldError(path, f"{path[-1]} {shown(text)} {exc}") from None
    if target.reach is Reach.PERSON and target.name not in people:
        raise FieldError(path, f"{path[-1]}: no person is named {shown(target.name)}")
    if target.reach is Reach.ROLE and not people.members(target.name):
        raise FieldError(path, f"{path[-1]}: nobody has the role {shown(target.name)}")
    return target


def _duration(path: Path, value: Any) -> int:
    text = _string(path, value, 'a duration string like "10m"')
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise FieldError(path, f"{path[-1]} {shown(text)} {exc}") from None


def _escalation(value: Any, route: Target, people: People) -> tuple[EscalationStep, ...]:
    if not isinstance(value, list) or not value:
        what = "a non-empty array" if isinstance(value, list) else type_name(value)
        raise FieldError(("escalate",), f"escalate must be an array of {{after, to}}, not {what}")
    steps: list[EscalationStep] = []
    previous = route
    for index, item in enumerate(value):
        at: Path = ("escalate", index)
        if not isinstance(item, dict):
            raise FieldError(at, f"escalate step {index + 1} must be a table {{after, to}}")
        for key in item:
            if key not in ("after", "to"):
                raise FieldError((*at, key), f"escalate: unknown field {shown(key)} (after, to)")
        if "after" not in item or "to" not in item:
            raise FieldError(at, f"escalate step {index + 1} needs both after and to")
        after = _duration((*at, "after"), item["after"])
        target = _target((*at, "to"), item["to"], people)
        if target.reach <= previous.reach:
            raise FieldError(
                (*at, "to"),
                f"escalate step {index + 1} goes to {target}, not wider than {previous}"
                " (person, then role, then everyone)",
            )
        if steps and after <= steps[-1].after_ms:
            raise FieldError((*at, "after"), f"escalate step {index + 1} is not later than the"
                             " one before (each after counts from the ask)")  # fmt: skip
        steps.append(EscalationStep(after, target))
        previous = target
    return tuple(steps)


def _quorum(value: Any, match: Match, people: People) -> Quorum:
    text = _string(("quorum",), value, 'a string like "2 of role:leads"')
    found = _QUORUM.fullmatch(text)
    if found is None:
        raise FieldError(("quorum",), f'quorum {shown(text)} is not like "2 of role:leads"')
    needed, role = int(found.group(1)), found.group(2)
    members = people.members(role)
    if not members:
        raise FieldError(("quorum",), f"quorum: nobody has the role {shown(role)}")
    if not 1 <= needed <= len(members):
        raise FieldError(("quorum",), f"quorum {shown(text)}: the role {shown(role)} has"
                         f" {len(members)} people")  # fmt: skip
    if match.kinds != frozenset({IntentKind.APPROVAL}):
        raise FieldError(("quorum",), 'a quorum rule must match kind = "approval" only: votes'
                         " approve or reject an approval (R4)")  # fmt: skip
    return Quorum(needed, role, members)


# What cannot go together, and why: the second field named is where the refusal points.
_CONFLICTS = (
    ("answer", ("route", "escalate", "quorum", "pending", "deny_after"),
     "a fixed answer settles the question at once"),
    ("quorum", ("route", "escalate", "pending"),
     "a quorum's audience is its role, and an approval is never pending"),
)  # fmt: skip
_ACTIONS = ("route", "escalate", "quorum", "answer", "pending", "deny_after")


def read_actions(table: dict[str, Any], match: Match, people: People) -> Actions:
    present = [key for key in _ACTIONS if key in table]
    if not present:
        raise FieldError((), f"does nothing: give it one of {', '.join(_ACTIONS)}")
    for first, others, why in _CONFLICTS:
        for other in others:
            if first in table and other in table:
                raise FieldError((other,), f"{first} cannot go with {other}: {why}")
    route = _target(("route",), table["route"], people) if "route" in table else None
    escalate: tuple[EscalationStep, ...] = ()
    if "escalate" in table:
        if route is None or route.reach is Reach.EVERYONE:
            raise FieldError(("escalate",), "escalate needs a route narrower than everyone")
        escalate = _escalation(table["escalate"], route, people)
    quorum = _quorum(table["quorum"], match, people) if "quorum" in table else None
    answer = None
    if "answer" in table:
        answer = _string(("answer",), table["answer"], "a string (an option's label)")
        if not answer:
            raise FieldError(("answer",), "answer is empty: it must name an option's label")
    pending = table.get("pending", False)
    if not isinstance(pending, bool):
        raise FieldError(("pending",), f"pending must be true or false, not {type_name(pending)}")
    deny = _duration(("deny_after",), table["deny_after"]) if "deny_after" in table else None
    return Actions(route, escalate, quorum, answer, pending, deny)
