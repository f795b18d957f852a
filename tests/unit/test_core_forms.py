"""The form mapping both doors share (core/forms.py): the Other field and what an accept means
(behavior.md F2, F3). The doors' own tests show it through the ACP and MCP SDK clients."""

from __future__ import annotations

import pytest

from askbridge.core.forms import form_answer, form_schema
from askbridge.core.question import questions_from_wire

BATCH = questions_from_wire(
    [
        {"id": "db", "question": "Which db?", "options": [{"label": "SQLite"}, {"label": "PG"}]},
        {
            "id": "extras",
            "question": "Which extras?",
            "options": [{"label": "CI"}, {"label": "Docker"}],
            "multiSelect": True,
        },
        {"id": "notes", "question": "Notes?"},
    ]
)


def test_F2_every_question_with_options_has_an_other_field_that_says_what_it_does() -> None:
    properties = form_schema(BATCH)["properties"]
    assert list(properties) == ["q1", "q1_other", "q2", "q2_other", "q3"]
    assert properties["q1_other"] == {
        "type": "string",
        "title": "Other",
        "description": "Your own answer (replaces the choice)",
    }
    assert properties["q2_other"] == {
        "type": "string",
        "title": "Other",
        "description": "Your own answer (added to the choices)",
    }


def test_F3_a_single_selects_other_wins_and_a_multi_selects_is_added_beside_the_labels() -> None:
    content = {
        "q1": "SQLite",
        "q1_other": "DuckDB",
        "q2": ["CI", "Docker"],
        "q2_other": "Renovate bot",
        "q3": "ship it",
    }
    answer = form_answer(BATCH, "accept", content, timed=True)
    assert answer.model_dump(exclude_none=True)["answers"] == [
        {"id": "db", "selected": [], "custom": "DuckDB"},
        {"id": "extras", "selected": ["CI", "Docker"], "custom": "Renovate bot"},
        {"id": "notes", "selected": [], "custom": "ship it"},
    ]


@pytest.mark.parametrize("other", ["", "   ", None])
def test_F3_an_empty_other_leaves_the_choice(other: str | None) -> None:
    content = {"q1": "PG", "q1_other": other, "q2": ["CI"], "q2_other": other}
    answers = form_answer(BATCH, "accept", content, timed=False).answers
    assert [(a.selected, a.custom) for a in answers[:2]] == [(["PG"], None), (["CI"], None)]


def test_F3_a_multi_selects_other_alone_is_the_answer() -> None:
    answers = form_answer(BATCH, "accept", {"q2": [], "q2_other": "Renovate"}, timed=True).answers
    assert (answers[1].selected, answers[1].custom) == ([], "Renovate")
