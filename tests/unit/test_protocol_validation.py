"""Wrong shapes are rejected with -32602 errors that name the field (protocol.md "Errors").

Also: unknown fields ignored, settings merging (T1), the `--model` option,
ACP `_meta.askbridge` reading, capability checks and method-name helpers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from askbridge.protocol import methods
from askbridge.protocol.acp import (
    AttachWaitResult,
    TurnNotification,
    acp_client_renders_questions,
    agent_capabilities_meta,
    session_settings_from_meta,
)
from askbridge.protocol.common import ErrorData
from askbridge.protocol.model_spec import (
    AskUserQuestionConfig,
    OpenAIModelSpec,
    ScriptModelSpec,
    parse_model_spec_option,
)
from askbridge.protocol.parsing import (
    InvalidParams,
    parse_params,
    parse_value,
    validation_errors,
)
from askbridge.protocol.payloads import ACP_EXT_METHODS, LSP_METHODS
from askbridge.protocol.questions import AnswerParams, AttachWaitParams, UserQuestionsAskParams
from askbridge.protocol.session import (
    SessionListParams,
    SessionNewParams,
    SessionPromptParams,
    lsp_client_renders_questions,
    server_experimental_capabilities,
)
from askbridge.protocol.updates import SessionUpdateParams, ToolCallUpdate

TIMEOUT_MESSAGE = "timeout must be -1 or a positive integer up to 2147483 seconds"


def invalid(model: Any, params: Any) -> list[dict[str, str]]:
    with pytest.raises(InvalidParams) as info:
        if isinstance(model, type):
            parse_params(model, params)
        else:
            parse_value(model, params)
    return info.value.errors


def fields(errors: list[dict[str, str]]) -> list[str]:
    return [e["field"] for e in errors]


# -- required fields and types -----------------------------------------------------------

ASK = {"sessionId": "s-1", "agentId": "a-1", "questions": [{"id": "db", "question": "Which?"}]}
CALL = {"sessionId": "s", "callId": "c"}


def ask_with(**question: Any) -> dict[str, Any]:
    return {**ASK, "questions": [{"id": "a", "question": "q", **question}]}


def answer_with(answer: Any) -> dict[str, Any]:
    return {**CALL, "answer": answer}


def update_with(**update: Any) -> dict[str, Any]:
    return {"sessionId": "s", "update": update}


@pytest.mark.parametrize(
    ("model", "params", "field"),
    [
        (SessionPromptParams, {"prompt": [{"type": "text", "text": "hi"}]}, "sessionId"),
        (SessionPromptParams, {"sessionId": "s"}, "prompt"),
        (SessionPromptParams, {"sessionId": "s", "prompt": [{"type": "text"}]}, "prompt.0.text"),
        (SessionPromptParams, {"sessionId": "s", "prompt": [{"type": "image"}]}, "prompt.0.type"),
        (SessionPromptParams, {"sessionId": 7, "prompt": []}, "sessionId"),
        (AttachWaitParams, CALL, "partialResultToken"),
        (AttachWaitParams, {**CALL, "partialResultToken": 1.5}, "partialResultToken"),
        (AttachWaitParams, {**CALL, "partialResultToken": True}, "partialResultToken"),
        (AnswerParams, answer_with({}), "answer.answers"),
        (AnswerParams, answer_with({"answers": [{}]}), "answer.answers.0.id"),
        (
            AnswerParams,
            answer_with({"answers": [{"id": "a", "selected": "x"}]}),
            "answer.answers.0.selected",
        ),
        (AnswerParams, answer_with([]), "answer"),
        (UserQuestionsAskParams, {**ASK, "questions": [{"question": "q"}]}, "questions.0.id"),
        (UserQuestionsAskParams, ask_with(id=""), "questions.0.id"),
        (UserQuestionsAskParams, ask_with(options=[{"label": 3}]), "questions.0.options.0.label"),
        (
            UserQuestionsAskParams,
            ask_with(intent={"kind": "plan-review"}),
            "questions.0.intent.approve",
        ),
        (UserQuestionsAskParams, {**ASK, "wait": {"timed": True}}, "wait.callId"),
        (
            SessionUpdateParams,
            update_with(sessionUpdate="turn_ended", turnId="t"),
            "update.stopReason",
        ),
        (
            SessionUpdateParams,
            update_with(
                sessionUpdate="tool_call_update", toolCallId="c", status="done", content=[]
            ),
            "update.status",
        ),
    ],
)
def test_wrong_shapes_are_rejected_naming_the_field(model: Any, params: Any, field: str) -> None:
    """protocol.md Errors: missing required fields or wrong types are -32602 naming each problem."""
    assert field in fields(invalid(model, params))


def test_every_problem_is_reported_not_only_the_first() -> None:
    """protocol.md Errors: `data.errors` describes each problem."""
    errors = invalid(
        SessionNewParams,
        {"model": {"kind": "script", "steps": [{"toolCalls": [{"id": "c"}]}, {"text": 3}]},
         "askUserQuestion": {"mode": "fast", "timeout": 0}},
    )  # fmt: skip
    assert fields(errors) == [
        "model.steps.0.toolCalls.0.name",
        "model.steps.1.text",
        "askUserQuestion.mode",
        "askUserQuestion.timeout",
    ]


def test_params_that_are_not_an_object_are_rejected() -> None:
    assert invalid(SessionListParams, [1, 2]) == [
        {"field": "", "message": "params must be a JSON object"}
    ]


def test_absent_params_count_as_empty_and_unknown_fields_are_ignored() -> None:
    """protocol.md: unknown fields in client messages are ignored."""
    assert parse_params(SessionListParams, None) == SessionListParams()
    prompt = parse_params(
        SessionPromptParams,
        {"sessionId": "s", "prompt": [{"type": "text", "text": "hi", "annotations": {}}], "x": 1},
    )
    assert prompt.dump() == {"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]}


def test_invalid_params_becomes_a_json_rpc_error() -> None:
    """protocol.md Errors: -32602 with `data.errors` = [{field, message}]."""
    with pytest.raises(InvalidParams) as info:
        parse_params(AttachWaitParams, {"sessionId": "s"})
    error = info.value.rpc_error()
    assert error["code"] == -32602
    assert error["data"] == {
        "errors": [
            {"field": "callId", "message": "Field required"},
            {"field": "partialResultToken", "message": "Field required"},
        ]
    }
    assert "callId: Field required" in error["message"]
    json.dumps(error)  # JSON-ready


def test_validation_errors_without_input_keeps_pydantic_locations() -> None:
    with pytest.raises(ValidationError) as info:
        SessionNewParams.model_validate({"model": {"kind": "script", "steps": 1}})
    assert validation_errors(info.value) == [
        {"field": "model.script.steps", "message": "Input should be a valid list"}
    ]
    data = {"model": {"kind": "script", "steps": 1}}
    assert fields(validation_errors(info.value, data=data)) == ["model.steps"]


# -- ModelSpec and ask settings (T1) -----------------------------------------------------


@pytest.mark.parametrize("bad", [0, -2, 2147484, 10**12, 1.5, 30.0, "30", True, None, [1]])
def test_bad_timeouts_are_rejected_on_the_timeout_field(bad: Any) -> None:
    """T1 / protocol.md Errors: askUserQuestion.timeout outside -1 | 1..2147483 is -32602."""
    errors = invalid(SessionNewParams, {"askUserQuestion": {"mode": "timed", "timeout": bad}})
    assert fields(errors) == ["askUserQuestion.timeout"]
    if isinstance(bad, int) and not isinstance(bad, bool):
        assert errors[0]["message"] == TIMEOUT_MESSAGE


@pytest.mark.parametrize("good", [-1, 1, 120, 2147483])
def test_good_timeouts_are_accepted(good: int) -> None:
    """T1: timeout is -1 or 1..2147483 seconds."""
    params = parse_params(SessionNewParams, {"askUserQuestion": {"timeout": good}})
    assert params.ask_user_question == AskUserQuestionConfig(mode="legacy", timeout=good)


def test_ask_config_defaults_are_legacy_and_120_seconds() -> None:
    """T1: mode defaults to legacy, timeout to 120."""
    assert AskUserQuestionConfig().dump() == {"mode": "legacy", "timeout": 120}


def test_ask_config_merges_only_the_fields_sent() -> None:
    """T1: a session's `{timeout}` keeps the server's configured mode, and the reverse."""
    server = AskUserQuestionConfig(mode="timed", timeout=30)
    only_timeout = parse_params(AskUserQuestionConfig, {"timeout": 5})
    only_mode = parse_params(AskUserQuestionConfig, {"mode": "legacy"})
    assert only_timeout.merged_over(server) == AskUserQuestionConfig(mode="timed", timeout=5)
    assert only_mode.merged_over(server) == AskUserQuestionConfig(mode="legacy", timeout=30)
    assert AskUserQuestionConfig().merged_over(server) == server


def test_unknown_or_missing_model_kind_names_model_kind() -> None:
    """protocol.md Errors: an unknown model kind is -32602 on session/new."""
    [error] = invalid(SessionNewParams, {"model": {"kind": "llama", "model": "x"}})
    assert error["field"] == "model.kind"
    assert "'llama'" in error["message"] and "'script', 'openai'" in error["message"]
    assert invalid(SessionNewParams, {"model": {"steps": []}}) == [
        {"field": "model.kind", "message": "Field required"}
    ]
    assert fields(invalid(SessionNewParams, {"model": "script"})) == ["model"]


def test_model_spec_requires_its_fields() -> None:
    assert fields(invalid(SessionNewParams, {"model": {"kind": "script"}})) == ["model.steps"]
    assert fields(invalid(SessionNewParams, {"model": {"kind": "openai"}})) == ["model.model"]


def test_model_option_reads_inline_json_and_script_files(tmp_path: Path) -> None:
    """protocol.md Command line: --model takes inline JSON or script:PATH (spec or bare steps)."""
    inline = parse_model_spec_option('{"kind": "openai", "model": "deepseek-chat"}')
    assert inline == OpenAIModelSpec(model="deepseek-chat")
    steps = [{"text": "hello"}, {"toolCalls": [{"id": "c1", "name": "delegate"}]}]
    bare = tmp_path / "steps.json"
    bare.write_text(json.dumps(steps))
    whole = tmp_path / "spec.json"
    whole.write_text(json.dumps({"kind": "script", "steps": steps}))
    from_bare = parse_model_spec_option(f"script:{bare}")
    assert isinstance(from_bare, ScriptModelSpec)
    assert from_bare == parse_model_spec_option(f"script:{whole}")
    assert from_bare.dump()["steps"][1] == {
        "toolCalls": [{"id": "c1", "name": "delegate", "arguments": {}}]
    }


def test_model_option_failures_are_plain_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="cannot read model script"):
        parse_model_spec_option(f"script:{tmp_path / 'missing.json'}")
    with pytest.raises(ValueError, match="--model is not valid JSON"):
        parse_model_spec_option("{not json")
    with pytest.raises(ValidationError):
        parse_model_spec_option('{"kind": "nope"}')


def test_tool_call_arguments_keep_any_json_value_including_null() -> None:
    """Script steps pass arguments to the tool as given (bad ones exercise T4)."""
    spec = parse_value(ScriptModelSpec, {"steps": [{"toolCalls": [
        {"id": "a", "name": "ask_user_question", "arguments": None},
        {"id": "b", "name": "ask_user_question", "arguments": "{not json"},
    ]}]})  # fmt: skip
    calls = spec.dump()["steps"][0]["toolCalls"]
    assert [c["arguments"] for c in calls] == [None, "{not json"]


# -- ACP door ----------------------------------------------------------------------------


def test_acp_meta_settings_are_read_and_other_keys_ignored() -> None:
    """protocol.md ACP: only `_meta.askbridge` is read; other `_meta` keys are ignored."""
    meta = {
        "askbridge": {"askUserQuestion": {"mode": "timed"}, "extra": 1},
        "zed": {"model": {"kind": "nope"}},
    }
    settings = session_settings_from_meta(meta)
    assert settings.dump() == {"askUserQuestion": {"mode": "timed", "timeout": 120}}
    assert settings.ask_user_question is not None
    assert settings.ask_user_question.model_fields_set == {"mode"}
    assert session_settings_from_meta(None).dump() == {}
    assert session_settings_from_meta({"other": 1}).dump() == {}


def test_acp_meta_settings_invalid_are_invalid_params_under_meta() -> None:
    """protocol.md ACP: invalid `_meta.askbridge` → -32602."""
    with pytest.raises(InvalidParams) as info:
        session_settings_from_meta({"askbridge": {"askUserQuestion": {"timeout": 0}}})
    assert info.value.errors == [
        {"field": "_meta.askbridge.askUserQuestion.timeout", "message": TIMEOUT_MESSAGE}
    ]
    with pytest.raises(InvalidParams) as info:
        session_settings_from_meta({"askbridge": "timed"})
    assert fields(info.value.errors) == ["_meta.askbridge"]


def test_turn_notification_requires_cause_or_stop_reason() -> None:
    """protocol.md ACP `_askbridge/turn`: started carries cause, ended carries stopReason."""
    base = {"sessionId": "s", "turnId": "t"}
    assert fields(invalid(TurnNotification, {**base, "event": "started"})) == ["cause"]
    assert fields(invalid(TurnNotification, {**base, "event": "ended"})) == ["stopReason"]
    assert fields(invalid(TurnNotification, {**base, "event": "paused"})) == ["event"]


def test_attach_wait_result_keeps_null_on_the_wire() -> None:
    """protocol.md ACP: `{remainingMs: null}` when there is no wait."""
    assert AttachWaitResult(remaining_ms=None).dump() == {"remainingMs": None}
    assert fields(invalid(AttachWaitResult, {})) == ["remainingMs"]


# -- capabilities, helpers, method names -------------------------------------------------


@pytest.mark.parametrize(
    ("declared", "expected"),
    [
        ({"userQuestions": {"version": 1}}, True),
        ({"userQuestions": {"version": 2}}, True),
        ({"userQuestions": {"version": True}}, False),
        ({"userQuestions": {"version": "1"}}, False),
        ({"userQuestions": {}}, False),
        ({"userQuestions": True}, False),
        ({}, False),
        (None, False),
        ([], False),
    ],
)
def test_lsp_capability_check(declared: Any, expected: bool) -> None:
    """protocol.md Lifecycle: `capabilities.experimental.userQuestions = {"version": 1}`."""
    assert lsp_client_renders_questions(declared) is expected
    acp_meta = {"askbridge": declared["userQuestions"]} if isinstance(declared, dict) and (
        "userQuestions" in declared) else declared  # fmt: skip
    assert acp_client_renders_questions(acp_meta) is expected


def test_server_capabilities() -> None:
    assert server_experimental_capabilities() == {"userQuestions": {"version": 1}}
    assert agent_capabilities_meta() == {"askbridge": {"version": 1}}


def test_tool_call_update_of_text() -> None:
    """protocol.md session/update: failures carry `error: {name, code}` and status failed."""
    err = ErrorData(name="UserQuestionError", code="ASK_CANCELLED")
    failed = ToolCallUpdate.of_text("c1", "Error: the user cancelled", error=err)
    assert failed.dump() == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c1",
        "status": "failed",
        "content": [
            {"type": "content", "content": {"type": "text", "text": "Error: the user cancelled"}}
        ],
        "error": {"name": "UserQuestionError", "code": "ASK_CANCELLED"},
    }
    assert ToolCallUpdate.of_text("c1", "{}").status == "completed"
    assert ToolCallUpdate.of_text("c1", "Error: x", failed=True).status == "failed"


def test_method_tables_use_the_named_constants() -> None:
    """Every method in the payload tables is one of the constants of methods.py."""
    constants = {v for k, v in vars(methods).items() if k.isupper() and isinstance(v, str)}
    assert set(LSP_METHODS) <= constants
    assert set(ACP_EXT_METHODS) <= constants
    for name in ACP_EXT_METHODS:
        assert name.startswith(methods.ACP_EXT_PREFIX)
        assert methods.wire_ext_name(methods.sdk_ext_name(name)) == name
    assert methods.sdk_ext_name("_askbridge/ask") == "askbridge/ask"
    with pytest.raises(ValueError):
        methods.sdk_ext_name("session/new")
    assert set(LSP_METHODS) == (
        methods.LSP_CLIENT_REQUESTS
        | methods.LSP_CLIENT_NOTIFICATIONS
        | methods.LSP_SERVER_REQUESTS
        | methods.LSP_SERVER_NOTIFICATIONS
    )
    assert set(ACP_EXT_METHODS) == (
        methods.ACP_CLIENT_EXT_REQUESTS
        | methods.ACP_SERVER_EXT_REQUESTS
        | methods.ACP_SERVER_EXT_NOTIFICATIONS
    )
    for name, payloads in LSP_METHODS.items():
        is_notification = (
            name in methods.LSP_CLIENT_NOTIFICATIONS | methods.LSP_SERVER_NOTIFICATIONS
        )
        assert payloads.notification is is_notification
