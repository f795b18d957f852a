"""A door that sends results typed reads `ToolOutcome.data()` (MCP's `structuredContent`, X2,
X4), never the text: for every kind, that object is what the model's text says (T3, T5, T6)."""

from __future__ import annotations

import json

import pytest

from askbridge.core import HarnessError, ToolInputError, UserQuestionError, tool_outcome_unknown
from askbridge.host.agent.tools import ToolOutcome
from askbridge.mcp.definitions import external_pending_message
from askbridge.protocol import ErrorCode
from askbridge.protocol.vocabulary import Answer, AnswerItem

OUTCOMES = {
    "answered": ToolOutcome.answered(
        Answer(answers=[AnswerItem(id="db", selected=["y"]), AnswerItem(id="n", custom="é\n")])
    ),
    "pending": ToolOutcome.pending("call-1"),
    "pending, X2": ToolOutcome.pending("call-1", external_pending_message("call-1")),
    "done": ToolOutcome.done({"answers": [], "pending": ["call-1"], "x": 1.5}),
}


@pytest.mark.parametrize("name", OUTCOMES)
def test_T3_T5_X2_the_data_is_the_object_the_text_renders(name: str) -> None:
    outcome = OUTCOMES[name]
    assert outcome.data() == json.loads(outcome.content)
    assert not outcome.is_error and outcome.message is None


@pytest.mark.parametrize(
    "exc",
    [
        ToolInputError("callIds must be an array of strings"),
        UserQuestionError.of(ErrorCode.ASK_ABORTED),
        tool_outcome_unknown(),
    ],
)
def test_T6_a_failures_data_is_its_name_code_and_message(exc: HarnessError) -> None:
    outcome = ToolOutcome.failure(exc)
    assert outcome.content == f"Error: {outcome.message}" and outcome.is_error
    assert outcome.data() == {**exc.to_data(), "message": exc.message}


def test_a_plain_text_is_data_as_text() -> None:
    """Another tool's own text (a delegate's), which no door sends typed, is not parsed."""
    assert ToolOutcome('{"a": 1}').data() == {"text": '{"a": 1}'}
