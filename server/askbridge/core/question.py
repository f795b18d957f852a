"""A question as the core holds it while it waits: plain frozen records, not pydantic models.

Architecture: "pydantic at the edges". A waiting question is held for as long
as nobody answers it — thousands at once in an editor left open — so what it
holds is the record it needs and nothing more: `Question` and `Option` are
frozen `__slots__` dataclasses over the strings the tool call (or the client's
payload) already decoded, about a sixth of the pydantic `QuestionItem` they
replace inside (benchmarks/bench_bridge_memory.py measures it). The wire model
`QuestionItem` stays what a payload is parsed into and what the schema is
generated from; a door builds its wire params from these with `dump()`, which
writes exactly `QuestionItem.dump()`'s form (camelCase, None fields left out).

They carry the same fields and helpers as `QuestionItem` (`is_multi` and
`option_labels()` from their shared `QuestionReading`, and `dump()`), so every
check (S1, A5, V8) and every door reads either. An intent (V3) stays its
pydantic model: only a programmatic caller's question has one (the
model-facing tool has no intent field, T2), and the checks tell the kinds
apart by their classes.

The short strings that name things — a question's id and header, its option
labels — are interned as a record is built (`_shared`): every tool call
decodes its own copy of them, yet they repeat across waiting questions ("db",
"Yes", "Allow"), so thousands of open cards keep one copy each. The prose (the
question, its detail, option descriptions) is kept as decoded.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from pydantic import TypeAdapter

from askbridge.protocol.vocabulary import Intent, QuestionItem, QuestionReading

# A label is at most 200 characters (S1); longer strings are left as they are (a batch
# breaking S1 is refused once its records are built, and is never kept).
_MAX_SHARED = 200


def _shared(name: str) -> str:
    """`name` interned when it is a short exact str (module docstring), else as it is."""
    if type(name) is str and len(name) <= _MAX_SHARED:
        return sys.intern(name)
    return name


@cache
def _intents() -> TypeAdapter[Any]:
    """The intent union's validator, built on first use (rare: start-up need not pay it)."""
    return TypeAdapter(Intent)


@dataclass(frozen=True, slots=True)
class Option:
    """V1: `label` is both the UI text and the value the model gets back."""

    label: str
    description: str | None = None

    def dump(self) -> dict[str, Any]:
        if self.description is None:
            return {"label": self.label}
        return {"label": self.label, "description": self.description}


@dataclass(frozen=True, slots=True)
class Question(QuestionReading):
    """V2, as checked: `id` non-empty, option labels non-empty (the reader that built it
    checked them: P2's view form, or a `QuestionItem`)."""

    id: str
    question: str
    detail: str | None = None
    header: str | None = None
    options: tuple[Option, ...] | None = None
    multi_select: bool | None = None
    intent: Intent | None = None

    def dump(self) -> dict[str, Any]:
        """The wire form, as `QuestionItem.dump()` writes it (key order included)."""
        wire: dict[str, Any] = {"id": self.id, "question": self.question}
        if self.detail is not None:
            wire["detail"] = self.detail
        if self.header is not None:
            wire["header"] = self.header
        if self.options is not None:
            wire["options"] = [o.dump() for o in self.options]
        if self.multi_select is not None:
            wire["multiSelect"] = self.multi_select
        if self.intent is not None:
            wire["intent"] = self.intent.dump()
        return wire

    @classmethod
    def from_wire(cls, wire: Mapping[str, Any]) -> Question:
        """From a wire-form question already checked (P2's view form: the projection's, or
        `read_questions`' of a tool call): its strings are shared, nothing re-checked."""
        raw_options = wire.get("options")
        options = None
        if raw_options is not None:
            options = tuple(Option(_shared(o["label"]), o.get("description")) for o in raw_options)
        intent, header = wire.get("intent"), wire.get("header")
        return cls(
            _shared(wire["id"]),
            wire["question"],
            wire.get("detail"),
            None if header is None else _shared(header),
            options,
            wire.get("multiSelect"),
            None if intent is None else _intents().validate_python(intent),
        )

    @classmethod
    def from_tool_item(cls, item: Mapping[str, Any]) -> Question:
        """From one item of the tool's `questions` that P2's reader took whole
        (`questions_valid`): `from_wire` of its view form (`view_questions`), without
        building that form first — the view keeps no detail and no intent, and spells
        `multi_select` as `multiSelect`."""
        raw_options = item.get("options")
        options = None
        if raw_options is not None:
            options = tuple(Option(_shared(o["label"]), o.get("description")) for o in raw_options)
        header = item.get("header")
        return cls(
            _shared(item["id"]),
            item["question"],
            None,
            None if header is None else _shared(header),
            options,
            item.get("multi_select"),
        )

    @classmethod
    def of(cls, item: QuestionItem) -> Question:
        """From the wire model a payload was parsed into (a programmatic caller's)."""
        options = None
        if item.options is not None:
            options = tuple(Option(_shared(o.label), o.description) for o in item.options)
        return cls(
            _shared(item.id),
            item.question,
            item.detail,
            None if item.header is None else _shared(item.header),
            options,
            item.multi_select,
            item.intent,
        )


def questions_from_wire(batch: Iterable[Mapping[str, Any]]) -> list[Question]:
    return [Question.from_wire(q) for q in batch]
