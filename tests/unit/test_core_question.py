"""V1/V2: the core's plain question records (core/question.py) write the wire form of the
pydantic `QuestionItem` exactly, from either reader, so no door sees a change."""

from __future__ import annotations

import json
from typing import Any

import pytest

from askbridge.core.question import Option, Question, questions_from_wire
from askbridge.protocol.vocabulary import QuestionItem

WIRE: list[dict[str, Any]] = [
    {"id": "q", "question": "Plain?"},
    {
        "id": "db",
        "question": "Which db?",
        "header": "Setup",
        "options": [{"label": "x"}, {"label": "y", "description": "why y"}],
        "multiSelect": True,
    },
    {
        "id": "p",
        "question": "Apply?",
        "detail": "1. a",
        "options": [{"label": "Yes"}, {"label": "No"}],
        "multiSelect": False,
        "intent": {"kind": "plan-review", "approve": "Yes"},
    },
    {
        "id": "a",
        "question": "Allow?",
        "detail": "rm -rf",
        "options": [{"label": "Allow"}, {"label": "Deny"}],
        "intent": {"kind": "approval", "approve": "Allow", "reject": "Deny", "always": None},
    },
]


@pytest.mark.parametrize("wire", WIRE, ids=[w["id"] for w in WIRE])
def test_v2_question_dumps_as_the_wire_model(wire: dict[str, Any]) -> None:
    item = QuestionItem.model_validate(wire)
    from_model, from_wire = Question.of(item), Question.from_wire(item.dump())
    assert from_model == from_wire
    assert from_model.dump() == item.dump()
    assert list(from_model.dump()) == list(item.dump())  # key order too
    assert from_model.option_labels() == item.option_labels()
    assert from_model.is_multi == item.is_multi
    assert type(from_wire.intent) is type(item.intent)


def test_v2_questions_decoded_apart_share_their_names() -> None:
    """Every tool call decodes its own strings; the names (id, header, labels) repeat across
    waiting questions and are kept once, the prose as decoded."""
    first, second = (Question.from_wire(json.loads(json.dumps(WIRE[1]))) for _ in range(2))
    assert first == second
    assert first.id is second.id and first.header is second.header
    assert first.option_labels()[1] is second.option_labels()[1]
    assert first.question is not second.question
    assert first.options is not None and second.options is not None
    assert first.options[1].description is not second.options[1].description


def test_v2_question_shares_the_strings_it_was_read_from() -> None:
    wire = WIRE[1]
    (question,) = questions_from_wire([wire])
    assert question.question is wire["question"]
    assert question.options == (Option("x"), Option("y", "why y"))
    assert question.options[1].description is wire["options"][1]["description"]
