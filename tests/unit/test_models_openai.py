"""The `openai` model (protocol.md "ModelSpec") against a real local HTTP server.

`chat_server` runs a tiny chat-completions endpoint on 127.0.0.1 (ephemeral
port, its own thread): it records every request it receives and answers with
the responses the test queued. Nothing here reaches the network.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anyio
import httpx
import pytest

from askbridge.host.agent.models.base import ModelError, ModelResponse, ToolCallRequest
from askbridge.host.agent.models.openai import OpenAIChatModel
from askbridge.host.log import events

KEY_ENV = "ASKBRIDGE_TEST_MODEL_KEY"
ASK_TOOL = {
    "name": "ask_user_question",
    "description": "Ask the user.",
    "parameters": {"type": "object", "properties": {"questions": {"type": "array"}}},
}


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class ChatServer:
    url: str
    requests: list[RecordedRequest] = field(default_factory=list)
    # (status, body) pairs answered in order; a dict body is sent as JSON.
    responses: list[tuple[int, Any]] = field(default_factory=list)
    # When set, the server holds every request until teardown (timeout tests).
    hang: bool = False
    release: threading.Event = field(default_factory=threading.Event)
    received: threading.Event = field(default_factory=threading.Event)


def _handler_for(server_state: ChatServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            server_state.requests.append(
                RecordedRequest(
                    self.path, {k.lower(): v for k, v in self.headers.items()}, json.loads(raw)
                )
            )
            server_state.received.set()
            if server_state.hang:
                server_state.release.wait(timeout=10)
                return
            status, body = server_state.responses.pop(0)
            payload = json.dumps(body).encode() if not isinstance(body, str) else body.encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output clean

    return Handler


@pytest.fixture
def chat_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ChatServer]:
    # A proxy from the environment would swallow requests meant for 127.0.0.1.
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv(KEY_ENV, "sk-test-123")
    state = ChatServer(url="")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(state))
    httpd.daemon_threads = True
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    # A short poll interval keeps shutdown (one poll at most) fast.
    thread = threading.Thread(target=httpd.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.release.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def _completion(message: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "cmpl-1",
        "object": "chat.completion",
        "model": "test-model",
        "choices": [
            {"index": 0, "message": {"role": "assistant", **message}, "finish_reason": "stop"}
        ],
    }


def _model(server: ChatServer, **kwargs: Any) -> OpenAIChatModel:
    return OpenAIChatModel("test-model", base_url=server.url, api_key_env=KEY_ENV, **kwargs)


HISTORY = [
    events.session_header(
        session_id="s-1",
        agent_id="a-1",
        origin="root",
        cwd="/tmp",
        model={"kind": "openai", "model": "test-model"},
        ask_user_question={"mode": "timed", "timeout": 120},
        created_at="2025-01-01T00:00:00Z",
    ),
    events.turn_start("t-1", "prompt"),
    events.user_message(events.text_content("Set up the project")),
    events.request_header([ASK_TOOL]),
    events.assistant_message(
        "Let me ask.",
        [{"id": "call-1", "name": "ask_user_question", "arguments": {"questions": [{"id": "db"}]}}],
    ),
    events.tool_call("call-1", "ask_user_question", {"questions": [{"id": "db"}]}),
    events.tool_result("call-1", "ask_user_question", '{"pending":true,"callId":"call-1"}'),
    events.request_header([ASK_TOOL]),
    events.assistant_message(
        "", [{"id": "call-2", "name": "ask_user_question", "arguments": "{bad"}]
    ),
    events.tool_result("call-2", "ask_user_question", "Error: bad input", is_error=True),
    events.request_header([ASK_TOOL]),
    events.assistant_message("Waiting for you.", []),
    events.turn_end("t-1", "end_turn"),
    events.inbox_inserted("in-1", "next-turn", events.text_content("SQLite")),
    events.inbox_claimed("in-1"),
    events.user_message(
        events.text_content("answer_to_pending_question call-1"),
        source=events.reply_source("call-1"),
        inbox_id="in-1",
    ),
]


async def test_modelspec_openai_request_carries_history_tools_model_and_key(
    chat_server: ChatServer,
) -> None:
    chat_server.responses.append((200, _completion({"content": "ok"})))
    await _model(chat_server).complete(HISTORY, [ASK_TOOL], 3)

    [request] = chat_server.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test-123"
    assert request.body["model"] == "test-model"
    assert request.body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "ask_user_question",
                "description": "Ask the user.",
                "parameters": ASK_TOOL["parameters"],
            },
        }
    ]
    messages = request.body["messages"]
    assert messages[0] == {"role": "user", "content": "Set up the project"}
    assert messages[1]["role"] == "assistant"
    assert messages[1]["content"] == "Let me ask."
    [wire_call] = messages[1]["tool_calls"]
    assert wire_call["id"] == "call-1"
    assert wire_call["type"] == "function"
    assert wire_call["function"]["name"] == "ask_user_question"
    assert json.loads(wire_call["function"]["arguments"]) == {"questions": [{"id": "db"}]}
    assert messages[2] == {
        "role": "tool",
        "tool_call_id": "call-1",
        "content": '{"pending":true,"callId":"call-1"}',
    }
    # An unparseable argument string the model produced goes back verbatim.
    assert messages[3]["tool_calls"][0]["function"]["arguments"] == "{bad"
    assert messages[4] == {"role": "tool", "tool_call_id": "call-2", "content": "Error: bad input"}
    # No tool calls → no tool_calls key (providers reject an empty array).
    assert messages[5] == {"role": "assistant", "content": "Waiting for you."}
    assert messages[6] == {"role": "user", "content": "answer_to_pending_question call-1"}
    assert len(messages) == 7  # headers, turns, tool/call and inbox events are skipped


async def test_modelspec_openai_without_tools_sends_no_tools_key(chat_server: ChatServer) -> None:
    chat_server.responses.append((200, _completion({"content": "hi"})))
    await _model(chat_server).complete([events.user_message(events.text_content("hi"))], [], 0)
    assert "tools" not in chat_server.requests[0].body


async def test_modelspec_openai_parses_a_tool_call_response(chat_server: ChatServer) -> None:
    chat_server.responses.append(
        (
            200,
            _completion(
                {
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_abc",
                            "type": "function",
                            "function": {
                                "name": "ask_user_question",
                                "arguments": '{"questions": [{"id": "db", "question": "Which?"}]}',
                            },
                        },
                        {
                            "id": "call_def",
                            "type": "function",
                            "function": {"name": "delegate", "arguments": "{not json"},
                        },
                    ],
                }
            ),
        )
    )
    response = await _model(chat_server).complete(HISTORY[:3], [ASK_TOOL], 0)
    assert response == ModelResponse(
        text="",
        tool_calls=[
            ToolCallRequest(
                "call_abc", "ask_user_question", {"questions": [{"id": "db", "question": "Which?"}]}
            ),
            ToolCallRequest("call_def", "delegate", "{not json"),
        ],
    )


async def test_modelspec_openai_parses_a_text_response(chat_server: ChatServer) -> None:
    chat_server.responses.append((200, _completion({"content": "All set."})))
    response = await _model(chat_server).complete(HISTORY[:3], [ASK_TOOL], 0)
    assert response == ModelResponse(text="All set.", tool_calls=[])


async def test_modelspec_openai_uses_a_given_http_client_and_leaves_it_open(
    chat_server: ChatServer,
) -> None:
    chat_server.responses += [
        (200, _completion({"content": "one"})),
        (200, _completion({"content": "two"})),
    ]
    async with httpx.AsyncClient() as client:
        model = _model(chat_server, http_client=client)
        assert (await model.complete(HISTORY[:3], [], 0)).text == "one"
        assert not client.is_closed
        assert (await model.complete(HISTORY[:3], [], 1)).text == "two"


async def test_modelspec_openai_error_status_names_status_endpoint_and_body(
    chat_server: ChatServer,
) -> None:
    chat_server.responses.append((500, {"error": {"message": "upstream exploded"}}))
    with pytest.raises(ModelError) as caught:
        await _model(chat_server).complete(HISTORY[:3], [ASK_TOOL], 0)
    message = str(caught.value)
    assert "500" in message
    assert f"{chat_server.url}/chat/completions" in message
    assert "upstream exploded" in message


async def test_modelspec_openai_long_error_body_is_cut_to_an_excerpt(
    chat_server: ChatServer,
) -> None:
    chat_server.responses.append((429, "x" * 5000))
    with pytest.raises(ModelError, match="429") as caught:
        await _model(chat_server).complete([], [], 0)
    assert len(str(caught.value)) < 600


@pytest.mark.parametrize(
    "body",
    [
        "this is not json",
        {"choices": []},
        {"choices": [{"index": 0}]},
        {"choices": [{"message": {"content": 7}}]},
        {"choices": [{"message": {"tool_calls": [{"type": "function", "function": {}}]}}]},
        {"choices": [{"message": {"tool_calls": {"id": "x"}}}]},
        ["not", "an", "object"],
    ],
)
async def test_modelspec_openai_malformed_response_is_a_model_error(
    chat_server: ChatServer, body: Any
) -> None:
    chat_server.responses.append((200, body))
    with pytest.raises(ModelError, match="malformed response"):
        await _model(chat_server).complete([], [], 0)


async def test_modelspec_openai_connection_refused_names_the_endpoint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test")
    # A bound socket that never listens: the port stays ours, connects are refused.
    with socket.socket() as reserved:
        reserved.bind(("127.0.0.1", 0))
        base_url = f"http://127.0.0.1:{reserved.getsockname()[1]}"
        model = OpenAIChatModel("m", base_url=base_url, api_key_env=KEY_ENV)
        with pytest.raises(ModelError, match="cannot connect") as caught:
            await model.complete([], [], 0)
    assert f"{base_url}/chat/completions" in str(caught.value)


async def test_modelspec_openai_unanswered_request_times_out_as_model_error(
    chat_server: ChatServer,
) -> None:
    chat_server.hang = True
    with pytest.raises(ModelError, match=r"did not answer within 0\.2 s"):
        await _model(chat_server, timeout=0.2).complete([], [], 0)


@pytest.mark.parametrize("value", [None, "", "   "])
async def test_modelspec_openai_missing_key_fails_before_any_request(
    chat_server: ChatServer, monkeypatch: pytest.MonkeyPatch, value: str | None
) -> None:
    if value is None:
        monkeypatch.delenv(KEY_ENV)
    else:
        monkeypatch.setenv(KEY_ENV, value)
    model = _model(chat_server)
    expected = f"environment variable {KEY_ENV} is not set; the openai model needs an API key"
    with pytest.raises(ModelError) as at_check:
        model.check()
    assert str(at_check.value) == expected
    with pytest.raises(ModelError) as at_request:
        await model.complete(HISTORY[:3], [], 0)
    assert str(at_request.value) == expected
    assert chat_server.requests == []


def test_modelspec_openai_default_key_variable_is_named_in_the_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    with pytest.raises(ModelError, match="environment variable DEEPSEEK_API_KEY is not set"):
        OpenAIChatModel("deepseek-chat").check()


async def test_modelspec_openai_key_is_read_at_each_request(
    chat_server: ChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV)
    model = _model(chat_server)  # building needs no key
    monkeypatch.setenv(KEY_ENV, "sk-later")
    model.check()
    chat_server.responses.append((200, _completion({"content": "ok"})))
    await model.complete([], [], 0)
    assert chat_server.requests[0].headers["authorization"] == "Bearer sk-later"


def test_modelspec_openai_endpoint_joins_base_url_with_or_without_slash() -> None:
    assert OpenAIChatModel("m", base_url="http://h").endpoint == "http://h/chat/completions"
    assert OpenAIChatModel("m", base_url="http://h/v1/").endpoint == "http://h/v1/chat/completions"


async def test_modelspec_openai_cancelling_a_request_propagates_cancellation(
    chat_server: ChatServer,
) -> None:
    """A cancelled turn must stay cancelled, not turn into a ModelError."""
    chat_server.hang = True
    outcome: list[str] = []

    async def request() -> None:
        try:
            await _model(chat_server).complete([], [], 0)
        except ModelError:
            outcome.append("model error")
            raise
        except anyio.get_cancelled_exc_class():
            outcome.append("cancelled")
            raise

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(request)
            # The server thread signals once it holds the request.
            assert await anyio.to_thread.run_sync(chat_server.received.wait, 5)
            tg.cancel_scope.cancel()
    assert outcome == ["cancelled"]
