"""The `script` model (protocol.md "ModelSpec") and the model factory's dispatch.

The script position is `request_index`, which the turn loop counts from the
log; these tests drive it directly.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import pytest

from askbridge.core.limits import CheckedQuestions
from askbridge.host.agent.model_output import MAX_REPLY_BYTES, checked_reply
from askbridge.host.agent.models.base import ModelResponse, ToolCallRequest
from askbridge.host.agent.models.factory import make_model
from askbridge.host.agent.models.openai import OpenAIChatModel
from askbridge.host.agent.models.script import ScriptModel, decode_tool_arguments
from askbridge.host.log import events
from askbridge.protocol.base import WireModel

ASK_TOOL = "ask_user_question"
LONG_ID = {"id": "x" * 65, "question": "?"}
ASK_ARGS = {"questions": [{"id": "db", "question": "Which database?"}]}
STEPS: list[dict[str, Any]] = [
    {"toolCalls": [{"id": "call-1", "name": "ask_user_question", "arguments": ASK_ARGS}]},
    {"text": "thinking", "toolCalls": [{"id": "call-2", "name": "delegate", "arguments": "{}"}]},
    {"text": "done"},
]


async def test_modelspec_script_each_request_takes_the_step_at_its_index() -> None:
    model = ScriptModel(STEPS)
    first = await model.complete([], [], 0)
    assert first == ModelResponse(
        text="", tool_calls=[ToolCallRequest("call-1", "ask_user_question", ASK_ARGS)]
    )
    second = await model.complete([], [], 1)
    assert second == ModelResponse(
        text="thinking", tool_calls=[ToolCallRequest("call-2", "delegate", {})]
    )
    assert await model.complete([], [], 2) == ModelResponse(text="done")
    # The position is the index, not a counter inside the model: asking again
    # for request 0 answers step 0 again.
    assert await model.complete([], [], 0) == first


async def test_modelspec_script_used_up_steps_answer_empty_text_and_no_tool_calls() -> None:
    model = ScriptModel(STEPS)
    for index in (3, 4, 1000):
        assert await model.complete([], [], index) == ModelResponse(text="", tool_calls=[])
    assert await ScriptModel([]).complete([], [], 0) == ModelResponse()


async def test_modelspec_script_restarted_session_takes_the_next_unused_step() -> None:
    """After a restart a new ScriptModel is built from the stored spec; the
    caller's request count from the log (one request/header per request)
    selects the next unused step."""
    log = [
        events.request_header([]),
        events.assistant_message("", [STEPS[0]["toolCalls"][0]]),
        events.tool_result("call-1", "ask_user_question", '{"answers":[]}'),
        events.request_header([]),
    ]
    requests_made = sum(1 for event in log if event["type"] == events.REQUEST_HEADER)
    reloaded = ScriptModel(STEPS)
    assert (await reloaded.complete(log, [], requests_made)).text == "done"


async def test_modelspec_script_json_string_arguments_are_decoded() -> None:
    model = ScriptModel(
        [
            {
                "toolCalls": [
                    {"id": "a", "name": "ask_user_question", "arguments": '{"questions": []}'},
                    {"id": "b", "name": "ask_user_question", "arguments": "{not json"},
                    {"id": "c", "name": "ask_user_question", "arguments": "[1, 2]"},
                    {"id": "d", "name": "ask_user_question"},
                ]
            }
        ]
    )
    calls = (await model.complete([], [], 0)).tool_calls
    assert [call.arguments for call in calls] == [{"questions": []}, "{not json", "[1, 2]", {}]


def test_decode_tool_arguments_keeps_non_object_input_for_the_tool_to_reject() -> None:
    assert decode_tool_arguments('{"a": 1}') == {"a": 1}
    assert decode_tool_arguments({"a": 1}) == {"a": 1}
    assert decode_tool_arguments("") == ""
    assert decode_tool_arguments('"text"') == '"text"'


async def test_modelspec_script_answers_are_copies_the_caller_may_change() -> None:
    model = ScriptModel(STEPS)
    first = await model.complete([], [], 0)
    first.tool_calls[0].arguments["questions"].clear()
    first.tool_calls.clear()
    again = await model.complete([], [], 0)
    assert again.tool_calls[0].arguments == ASK_ARGS


class _ToolCallModel(WireModel):
    id: str
    name: str
    arguments: Any = None


class _StepModel(WireModel):
    text: str | None = None
    tool_calls: list[_ToolCallModel] | None = None


async def test_modelspec_script_accepts_pydantic_steps_in_wire_form() -> None:
    steps = [
        _StepModel(tool_calls=[_ToolCallModel(id="c1", name="ask_user_question", arguments="{}")]),
        _StepModel(text="bye"),
    ]
    model = ScriptModel(steps)
    assert (await model.complete([], [], 0)).tool_calls == [
        ToolCallRequest("c1", "ask_user_question", {})
    ]
    assert await model.complete([], [], 1) == ModelResponse(text="bye")


async def test_modelspec_script_ignores_unknown_step_keys() -> None:
    model = ScriptModel([{"text": "hi", "comment": "for humans"}])
    assert await model.complete([], [], 0) == ModelResponse(text="hi")


@pytest.mark.parametrize(
    ("steps", "fragment"),
    [
        ("not a list", "steps must be a list"),
        ([42], "script step 0 must be an object"),
        ([{"text": 3}], "script step 0.text"),
        ([{"text": "ok"}, {"toolCalls": {"id": "x"}}], "script step 1.toolCalls must be a list"),
        ([{"toolCalls": [{"name": "ask_user_question"}]}], "toolCalls[0].id"),
        ([{"toolCalls": [{"id": "c", "name": ""}]}], "toolCalls[0].name"),
        ([{"toolCalls": ["call"]}], "toolCalls[0] must be an object"),
    ],
)
def test_modelspec_script_malformed_steps_fail_when_the_model_is_built(
    steps: Any, fragment: str
) -> None:
    with pytest.raises(ValueError, match=re.escape(fragment)):
        ScriptModel(steps)


async def test_modelspec_script_rejects_a_negative_request_index() -> None:
    with pytest.raises(ValueError):
        await ScriptModel(STEPS).complete([], [], -1)


async def test_modelspec_factory_builds_a_script_model_from_the_spec() -> None:
    model = make_model({"kind": "script", "steps": STEPS})
    assert isinstance(model, ScriptModel)
    assert (await model.complete([], [], 2)).text == "done"


class _OpenAISpec(WireModel):
    kind: str
    model: str
    base_url: str | None = None
    api_key_env: str | None = None


def test_modelspec_factory_builds_an_openai_model_with_defaults_and_overrides() -> None:
    default = make_model({"kind": "openai", "model": "deepseek-chat"})
    assert isinstance(default, OpenAIChatModel)
    assert default.model == "deepseek-chat"
    assert default.endpoint == "https://api.deepseek.com/chat/completions"
    assert default.api_key_env == "DEEPSEEK_API_KEY"
    custom = make_model(
        _OpenAISpec(kind="openai", model="m", base_url="http://h/v1/", api_key_env="MY_KEY")
    )
    assert isinstance(custom, OpenAIChatModel)
    assert custom.endpoint == "http://h/v1/chat/completions"
    assert custom.api_key_env == "MY_KEY"


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ({"kind": "gpt"}, "unknown model kind 'gpt'"),
        ({}, "unknown model kind None"),
        ("script", "must be an object"),
        ({"kind": "script"}, "needs steps"),
        ({"kind": "script", "steps": [{"text": 1}]}, "script step 0"),
        ({"kind": "openai"}, "needs model"),
        ({"kind": "openai", "model": "m", "baseUrl": 5}, "baseUrl"),
        ({"kind": "openai", "model": "m", "apiKeyEnv": ""}, "apiKeyEnv"),
    ],
)
def test_modelspec_factory_rejects_bad_specs_with_value_error(spec: Any, fragment: str) -> None:
    with pytest.raises(ValueError, match=re.escape(fragment)):
        make_model(spec)


# S1, S3, S7 once per script step: a step passing them unchanged reaches the turn loop as
# `checked`; any step one of them would change or refuse is walked on every request.
HOSTILE_STEPS: list[dict[str, Any]] = [
    {"toolCalls": [{"id": "n", "name": "x", "arguments": {"v": float("nan")}}]},  # S3
    {"text": "lone \ud800"},  # S3: scrubbed
    {"toolCalls": [{"id": "\udc00", "name": "x", "arguments": {}}]},
    {"toolCalls": [{"id": "a", "name": "x", "arguments": {"k": "\ud800"}}]},
    {"toolCalls": [{"id": "q", "name": ASK_TOOL, "arguments": {"questions": 1}}]},  # T4
    {"toolCalls": [{"id": "q", "name": ASK_TOOL, "arguments": {"questions": [LONG_ID]}}]},  # S1
    {"text": "x" * MAX_REPLY_BYTES + "x"},  # S7
]


@pytest.mark.parametrize("step", HOSTILE_STEPS, ids=range(len(HOSTILE_STEPS)))
async def test_S1_S3_S7_a_script_step_a_check_would_change_is_checked_on_every_request(
    step: dict[str, Any],
) -> None:
    assert not (await ScriptModel([step]).complete([], [], 0)).checked


async def test_S1_S3_a_clean_script_step_is_checked_once_with_the_same_outcome() -> None:
    model = ScriptModel(STEPS)
    for index in range(len(STEPS)):
        reply = await model.complete([], [], index)
        assert reply.checked
        assert checked_reply(reply) == checked_reply(replace(reply, checked=False))
    ask = checked_reply(await model.complete([], [], 0))[1][0]
    assert type(ask.questions) is CheckedQuestions and ask.questions[0].id == "db"
