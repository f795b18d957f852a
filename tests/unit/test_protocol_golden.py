"""Golden JSON: literal examples from protocol.md parse and dump back identically.

Each example is the JSON of protocol.md with its `…` placeholders filled in;
parsing it and dumping the model must give back exactly the same JSON value.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from askbridge.protocol import WireModel
from askbridge.protocol.parsing import adapter_for
from askbridge.protocol.payloads import payload_stems

STEMS = payload_stems()

GOLDEN: list[tuple[str, str]] = [
    # userQuestions/ask (request, s→c)
    (
        "userQuestions.ask.params",
        """{"sessionId": "s-1", "agentId": "a-1",
 "questions": [{"id": "db", "question": "Which database?", "header": "Setup",
                "detail": "markdown…", "options": [{"label": "SQLite (Recommended)", "description": "…"}],
                "multiSelect": false, "intent": {"kind": "plan-review", "approve": "SQLite (Recommended)"}}],
 "wait": {"callId": "call-1", "timed": true}}""",
    ),
    ("userQuestions.ask.result", '{"answers": [{"id": "db", "selected": ["SQLite (Recommended)"]}]}'),
    ("error.data", '{"name": "UserQuestionError", "code": "ASK_TIMED_OUT"}'),
    ("error.data", '{"name": "SessionError", "code": "UNKNOWN_SESSION"}'),
    # Lifecycle
    ("initialize.capabilities.experimental", '{"userQuestions": {"version": 1}}'),
    (
        "initialize.initializationOptions",
        '{"model": {"kind": "script", "steps": []}, "askUserQuestion": {"mode": "timed", "timeout": 30}}',
    ),
    ("initialize.serverInfo", '{"name": "askbridge", "version": "0.1.0"}'),
    # ModelSpec
    (
        "ModelSpec",
        """{"kind": "script", "steps": [{"text": "…"},
 {"toolCalls": [{"id": "call-1", "name": "ask_user_question",
                 "arguments": {"questions": [{"id": "db", "question": "Which database?"}], "timeout": 60}}],
  "text": "…"}]}""",
    ),
    (
        "ModelSpec",
        '{"kind": "openai", "model": "deepseek-chat", "baseUrl": "https://api.deepseek.com", "apiKeyEnv": "DEEPSEEK_API_KEY"}',
    ),
    # The model-facing ask_user_question arguments (protocol/README.md, T2)
    (
        "tool.ask_user_question.arguments",
        '{"questions": [{"id": "db", "question": "Which database?", "header": "Setup", "options": [{"label": "SQLite", "description": "…"}], "multi_select": false}], "timeout": 60}',
    ),
    # Sessions
    (
        "session.new.params",
        '{"cwd": "/tmp", "model": {"kind": "openai", "model": "deepseek-chat"}, "askUserQuestion": {"mode": "timed", "timeout": -1}}',
    ),
    ("session.new.result", '{"sessionId": "s-1"}'),
    ("session.load.params", '{"sessionId": "s-1"}'),
    ("session.list.params", "{}"),
    ("session.load.result", "{}"),
    (
        "session.list.result",
        '{"sessions": [{"sessionId": "s-1", "createdAt": "2025-01-02T03:04:05Z", "title": "Setup"}, {"sessionId": "s-2", "createdAt": "2025-01-02T03:04:06Z"}]}',
    ),
    ("session.prompt.params", '{"sessionId": "s-1", "prompt": [{"type": "text", "text": "Set up the project"}]}'),
    ("session.prompt.result", '{"stopReason": "max_turn_requests"}'),
    ("session.cancel.params", '{"sessionId": "s-1"}'),
    # session/update kinds
    ("session.update.params", '{"sessionId": "s-1", "update": {"sessionUpdate": "turn_started", "turnId": "t-1", "cause": "inbox"}}'),
    ("session.update.params", '{"sessionId": "s-1", "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Hello"}}}'),
    (
        "session.update.params",
        '{"sessionId": "s-1", "update": {"sessionUpdate": "user_message", "content": [{"type": "text", "text": "{\\"kind\\":\\"answer_to_pending_question\\"}"}], "source": {"kind": "user-question-reply", "callId": "call-1", "outcome": "answered"}}}',
    ),
    (
        "session.update.params",
        '{"sessionId": "s-1", "update": {"sessionUpdate": "tool_call", "toolCallId": "call-1", "title": "ask_user_question", "status": "in_progress", "rawInput": {"questions": []}}}',
    ),
    (
        "session.update.params",
        '{"sessionId": "s-1", "update": {"sessionUpdate": "tool_call_update", "toolCallId": "call-1", "status": "failed", "content": [{"type": "content", "content": {"type": "text", "text": "Error: the user cancelled ask_user_question"}}], "error": {"name": "UserQuestionError", "code": "ASK_CANCELLED"}}}',
    ),
    ("session.update.params", '{"sessionId": "s-1", "update": {"sessionUpdate": "turn_ended", "turnId": "t-1", "stopReason": "cancelled"}}'),
    # userQuestions/didChange and the client → server methods
    (
        "userQuestions.didChange.params",
        '{"sessionId": "s-1", "changes": [{"callId": "call-2", "state": "open", "questions": [{"id": "db", "question": "Which database?"}]}, {"callId": "call-2", "state": "continued"}, {"callId": "call-1", "state": "settled", "answers": [{"id": "db", "selected": [], "custom": "Postgres"}]}, {"callId": "call-3", "state": "removed"}]}',
    ),
    ("userQuestions.attachWait.params", '{"sessionId": "s-1", "callId": "call-1", "partialResultToken": "tok-1"}'),
    ("userQuestions.attachWait.params", '{"sessionId": "s-1", "callId": "call-1", "partialResultToken": 7}'),
    ("userQuestions.attachWait.progress", '{"token": 7, "value": {"remainingMs": 119500}}'),
    ("userQuestions.attachWait.result", "null"),
    ("userQuestions.answer.params", '{"sessionId": "s-1", "callId": "call-1", "answer": {"answers": [{"id": "db", "selected": []}]}}'),
    ("userQuestions.answer.result", "true"),
    ("userQuestions.withdrawReply.params", '{"sessionId": "s-1", "callId": "call-1"}'),
    ("userQuestions.list.params", '{"sessionId": "s-1"}'),
    ("userQuestions.list.result", '{"active": [], "settled": []}'),
    ("error.invalidParams.data", '{"errors": [{"field": "questions.0.id", "message": "Field required"}]}'),
    # ACP door
    ("acp.capabilities._meta", '{"askbridge": {"version": 1}}'),
    ("acp.session.new._meta", '{"askbridge": {"model": {"kind": "script", "steps": [{"text": "hi"}]}, "askUserQuestion": {"mode": "timed", "timeout": 120}}}'),
    ("acp.session.update._meta", '{"askbridge": {"source": {"kind": "user-question-reply", "callId": "call-1", "outcome": "answered"}}}'),
    ("acp.session.update._meta", '{"askbridge": {"error": {"name": "ToolError", "code": "TOOL_OUTCOME_UNKNOWN"}}}'),
    ("_askbridge.cancelAsk.params", '{"sessionId": "s-1", "callId": "call-1"}'),
    ("_askbridge.cancelAsk.params", '{"sessionId": "s-1"}'),
    ("_askbridge.attachWait.params", '{"sessionId": "s-1", "callId": "call-1"}'),
    ("_askbridge.attachWait.result", '{"remainingMs": 1500}'),
    ("_askbridge.attachWait.result", '{"remainingMs": null}'),
    ("_askbridge.releaseWait.params", '{"sessionId": "s-1", "callId": "call-1"}'),
    ("_askbridge.releaseWait.result", '{"released": true}'),
    ("_askbridge.answer.result", '{"accepted": false}'),
    ("_askbridge.withdrawReply.result", '{"withdrawn": true}'),
    ("_askbridge.turn.params", '{"sessionId": "s-1", "turnId": "t-2", "event": "started", "cause": "inbox"}'),
    ("_askbridge.turn.params", '{"sessionId": "s-1", "turnId": "t-2", "event": "ended", "stopReason": "end_turn"}'),
]  # fmt: skip


@pytest.mark.parametrize(("stem", "text"), GOLDEN)
def test_protocol_md_example_round_trips_exactly(stem: str, text: str) -> None:
    """protocol.md examples: parse, then dump, gives back the same JSON value."""
    tp = STEMS[stem]
    adapter = adapter_for(tp)
    value = adapter.validate_json(text)
    dumped: Any = (
        value.dump()
        if isinstance(value, WireModel)
        else adapter.dump_python(value, mode="json", by_alias=True, exclude_none=True)
    )
    assert dumped == json.loads(text)
    assert adapter.validate_python(json.loads(text)) == value


def test_golden_examples_cover_every_method_of_both_doors() -> None:
    """Each method's params (and result, for requests) has at least one golden example,
    either here or through a payload shared with another method."""
    covered = {stem for stem, _ in GOLDEN}
    covered_types = {id(STEMS[stem]) for stem in covered}
    missing = sorted(
        s for s, tp in STEMS.items() if s not in covered and id(tp) not in covered_types
    )
    assert not missing, f"no golden example for {missing}"
