"""The documented model-facing tool schema (protocol/schema/tool.ask_user_question.arguments.json,
from `AskUserQuestionArguments`) matches what the model is really shown (T2), in both modes,
and the keys a script may use are exactly those."""

from __future__ import annotations

import pytest

from askbridge.core import SimpleAgentRegistry, UserQuestionService
from askbridge.host.agent.tools import AskUserQuestionTool
from askbridge.protocol.tool_arguments import (
    AskUserQuestionArguments,
    ToolOptionArgument,
    ToolQuestionArgument,
    unknown_script_keys,
)


@pytest.mark.parametrize("mode", ["legacy", "timed"])
def test_the_documented_arguments_are_the_ones_the_model_sees(mode: str) -> None:
    tool = AskUserQuestionTool(UserQuestionService(SimpleAgentRegistry()), mode)  # type: ignore[arg-type]
    parameters = tool.schema()["parameters"]
    expected = set(AskUserQuestionArguments.model_fields) - (
        {"timeout"} if mode == "legacy" else set()
    )
    assert set(parameters["properties"]) == expected
    question = parameters["properties"]["questions"]["items"]
    assert set(question["properties"]) == set(ToolQuestionArgument.model_fields)
    assert set(question["required"]) == {"id", "question"}
    option = question["properties"]["options"]["items"]
    assert set(option["properties"]) == set(ToolOptionArgument.model_fields)


def ask(**arguments: object) -> list[dict[str, object]]:
    return [{"toolCalls": [{"id": "c", "name": "ask_user_question", "arguments": arguments}]}]


def test_script_keys_are_checked_where_they_are_and_only_keys() -> None:
    question = {"id": "a", "question": "q", "options": [{"label": "x", "icon": "star"}]}
    assert unknown_script_keys(ask(questions=[question], colour="red")) == [
        "steps[0].toolCalls[0].arguments: unknown key 'colour'; expected questions, timeout",
        "steps[0].toolCalls[0].arguments.questions[0].options[0]: unknown key 'icon'; "
        "expected description, label",
    ]
    # Wrong values and shapes are the tool's to report (T4), not the key check's.
    assert unknown_script_keys(ask(questions="nope", timeout="soon")) == []
    assert (
        unknown_script_keys([{"toolCalls": [{"id": "c", "name": "other", "arguments": {"x": 1}}]}])
        == []
    )
