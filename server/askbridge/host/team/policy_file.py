"""Reading a policy file (R5): TOML in, a checked `Policy` out, or one line naming the line.

The format is docs/policies.md's. Everything a rule says is checked here, once,
at start: a syntax error, an unknown field, a value of the wrong type, a person or
role nobody is, a quorum larger than its role, a bad duration or regex, actions
that cannot go together. Each refusal is `PolicyError` with one line,
`FILE:LINE: what is wrong`, so a policy that loads is one evaluation can trust.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NoReturn

from askbridge.protocol.text import visible

from .audience import EVERYONE, People, Reach, Target
from .policy import Policy, Rule
from .rule_fields import FieldError, read_actions, read_match, shown, type_name
from .toml_lines import key_lines, line_of

RULE_FIELDS = ("name", "match", "route", "escalate", "quorum", "answer", "pending", "deny_after")
# A rule's name is its provenance (`policy:<name>`, R6): short, and nothing to misread.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_SYNTAX_AT = re.compile(r"\s*\(at line (\d+), column (\d+)\)$")


class PolicyError(ValueError):
    """A policy refused: one line, `FILE:LINE: what is wrong`."""


def load_policy(path: str | Path, people: Mapping[str, Iterable[str]] | People) -> Policy:
    """The policy in `path`, checked against `people` (each person's roles, R1)."""
    name = json.dumps(visible(str(path)), ensure_ascii=False)[1:-1]
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise PolicyError(f"{name}: cannot read the policy: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise PolicyError(f"{name}:{line}: the policy is not UTF-8 text") from None
    return parse_policy(text, name, people)


def parse_policy(text: str, source: str, people: Mapping[str, Iterable[str]] | People) -> Policy:
    """The policy `text` (read from `source`, which errors name), checked against `people`."""
    team = people if isinstance(people, People) else People.of(people)
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        at = _SYNTAX_AT.search(message)
        line = int(at.group(1)) if at else text.count("\n") + 1  # "(at end of document)"
        what = message[: at.start()] if at else message.removesuffix(" (at end of document)")
        where = f" (column {at.group(2)})" if at else " (at the end)"
        raise PolicyError(f"{source}:{line}: TOML syntax: {what}{where}") from None
    return _Reader(text, source, team).policy(document)


class _Reader:
    def __init__(self, text: str, source: str, people: People) -> None:
        self.source = source
        self.people = people
        # Where each key is written; read from the text once, as a rule's line is needed.
        self.lines = key_lines(text)

    def fail(self, path: tuple[str | int, ...], message: str) -> NoReturn:
        raise PolicyError(f"{self.source}:{line_of(self.lines, path)}: {message}")

    def policy(self, document: dict[str, Any]) -> Policy:
        for key in document:
            if key != "rule":
                self.fail((key,), f"unknown field {shown(key)} (a policy is [[rule]] tables)")
        rules = document.get("rule", [])
        if not isinstance(rules, list) or not all(isinstance(r, dict) for r in rules):
            self.fail(("rule",), "rule must be an array of tables, each begun by [[rule]]")
        seen: dict[str, int] = {}
        read: list[Rule] = []
        for index, table in enumerate(rules):
            rule = self.rule(("rule", index), table, index)
            if rule.name in seen:
                self.fail(
                    ("rule", index, "name"),
                    f"rule {shown(rule.name)} is named twice (first on line {seen[rule.name]}):"
                    " a name says which rule answered (R6)",
                )
            seen[rule.name] = rule.line
            read.append(rule)
        return Policy(self.source, tuple(read), self.people)

    def rule(self, at: tuple[str | int, ...], table: dict[str, Any], index: int) -> Rule:
        name = table.get("name")
        label = f"rule {shown(name)}" if isinstance(name, str) else f"rule {index + 1}"
        for key in table:
            if key not in RULE_FIELDS:
                fields = ", ".join(RULE_FIELDS)
                self.fail((*at, key), f"{label}: unknown field {shown(key)} (fields: {fields})")
        if name is None:
            self.fail(at, f'{label} has no name (name = "…", used as policy:<name>)')
        if not isinstance(name, str):
            self.fail((*at, "name"), f"{label}: name must be a string, not {type_name(name)}")
        if _NAME.fullmatch(name) is None:
            self.fail(
                (*at, "name"),
                f"{label}: a name is 1-64 letters, digits, '.', '_' or '-', starting with a"
                " letter or digit",
            )
        try:
            match = read_match(table.get("match", {}))
            actions = read_actions(table, match, self.people)
        except FieldError as exc:
            self.fail((*at, *exc.path), f"{label}: {exc.message}")
        route = actions.route or EVERYONE
        if actions.quorum is not None:
            route = Target(Reach.ROLE, actions.quorum.role)
        return Rule(
            name,
            line_of(self.lines, at),
            match,
            route,
            actions.escalate,
            actions.quorum,
            actions.answer,
            actions.pending,
            actions.deny_after_ms,
        )
