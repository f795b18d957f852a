"""protocol.md "Errors" at the byte level, against one shared `askbridge serve` process.

Every test sends something broken, checks the exact error, then checks the same
process still serves (`session/list` answers). "No reply was sent" is checked by
ordering: the next reply to arrive is the one to a later request, never by sleeping.
The module shares one server (and one event loop) so that each case also proves
the earlier ones left the connection usable.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from askbridge.testing.strict_frames import frame
from askbridge.testing.wire import RawServer

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.timeout(60),
    pytest.mark.own_host_modes,  # one server per module, in each host mode
]

MAX_BODY = 8 * 1024 * 1024


@pytest_asyncio.fixture(loop_scope="module", scope="module", params=["inline", "auto"])
async def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[RawServer]:
    data: Path = tmp_path_factory.mktemp("wire-errors") / "data"
    async with RawServer.start(data, host=request.param) as server:
        assert "result" in await server.initialize()
        yield server
        assert await server.shutdown_and_exit() == 0
        assert await server.read_to_end() == []


async def still_serving(server: RawServer) -> None:
    """The next message is the reply to a fresh request: nothing else was sent meanwhile."""
    msg_id = await server.request("session/list", {})
    assert await server.receive() == {"jsonrpc": "2.0", "id": msg_id, "result": {"sessions": []}}


def request_bytes(msg_id: int, method: str, params: object = None) -> bytes:
    message: dict[str, object] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


@pytest.mark.parametrize("body", [b'{"jsonrpc": "2.0", "id": 1, ', b'"\xff\xfe"', b""])
async def test_invalid_json_is_parse_error_with_null_id(server: RawServer, body: bytes) -> None:
    """Errors: -32700 with id null; the server keeps running."""
    server.send_bytes(frame(body))
    reply = await server.receive()
    assert reply["id"] is None and reply["error"]["code"] == -32700, reply
    await still_serving(server)


@pytest.mark.parametrize(
    ("message", "reply_id"),
    [
        ({"foo": 1}, None),
        ([], None),
        ([{"jsonrpc": "2.0", "id": 3, "method": "session/list"}], None),
        ("just a string", None),
        ({"jsonrpc": "1.0", "id": 7, "method": "session/list"}, 7),
        ({"jsonrpc": "2.0", "id": "x", "method": 42}, "x"),
        ({"jsonrpc": "2.0", "id": [1], "method": "session/list"}, None),
    ],
)
async def test_json_that_is_not_json_rpc_is_invalid_request(
    server: RawServer, message: object, reply_id: object
) -> None:
    """Errors: -32600 for JSON that is not JSON-RPC (batches included), with the id when readable."""
    server.send_bytes(frame(json.dumps(message)))
    reply = await server.receive()
    assert reply["error"]["code"] == -32600 and reply["id"] == reply_id, reply
    await still_serving(server)


async def test_oversized_content_length_is_refused_and_its_bytes_skipped(server: RawServer) -> None:
    """Errors: Content-Length over 8 MiB → -32600 with id null; the body is discarded unparsed
    (a whole request hidden inside it is never answered) and the connection continues."""
    hidden = frame(request_bytes(99, "session/list", {}))
    body = hidden + b" " * (MAX_BODY + 1 - len(hidden))
    server.send_bytes(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    reply = await server.receive(timeout=30)
    assert reply["id"] is None and reply["error"]["code"] == -32600, reply
    assert "exceeds" in reply["error"]["message"]
    await still_serving(server)  # request 99 was never answered: this reply comes next


async def test_a_body_of_exactly_8_mib_is_accepted(server: RawServer) -> None:
    """Errors: the limit is "exceeds 8 MiB": a body of exactly 8 MiB is served."""
    head = b'{"jsonrpc": "2.0", "id": 41, "method": "session/list", "params": {"pad": "'
    tail = b'"}}'
    body = head + b"x" * (MAX_BODY - len(head) - len(tail)) + tail
    assert len(body) == MAX_BODY
    server.send_bytes(frame(body))
    assert await server.receive(timeout=30) == {
        "jsonrpc": "2.0",
        "id": 41,
        "result": {"sessions": []},
    }


@pytest.mark.parametrize(
    "garbage",
    [
        b"Hello there\r\n\r\n",
        b"Content-Length: abc\r\n\r\n",
        b"Content-Type: application/json\r\n\r\n",  # no Content-Length
        b"Content-Length: 5\n\n",  # bare LF
    ],
)
async def test_malformed_header_block_is_skipped_to_the_next_header(
    server: RawServer, garbage: bytes
) -> None:
    """Errors: a malformed header block is skipped up to the next header; nothing crashes."""
    server.send_bytes(garbage + frame(request_bytes(51, "session/list", {})))
    reply = await server.receive()
    assert reply["id"] is None and reply["error"]["code"] == -32600, reply
    assert await server.receive() == {"jsonrpc": "2.0", "id": 51, "result": {"sessions": []}}
    await still_serving(server)


async def test_header_names_are_case_insensitive_and_other_headers_ignored(
    server: RawServer,
) -> None:
    """Framing: `content-length` in lower case is accepted; Content-Type is ignored."""
    body = request_bytes(61, "session/list", {})
    server.send_bytes(b"content-length: %d\r\n\r\n%b" % (len(body), body))
    body = request_bytes(62, "session/list", {})
    server.send_bytes(
        b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nCONTENT-LENGTH: %d\r\n\r\n%b"
        % (len(body), body)
    )
    assert (await server.receive())["id"] == 61
    assert (await server.receive())["id"] == 62


async def test_a_frame_split_across_writes_is_reassembled(server: RawServer) -> None:
    """Framing: a frame may arrive in pieces (header and body split byte by byte)."""
    data = frame(request_bytes(71, "session/list", {}))
    for i in range(0, len(data), 7):
        server.send_bytes(data[i : i + 7])
        await server.drain()
    assert (await server.receive())["id"] == 71


async def test_unknown_request_is_method_not_found(server: RawServer) -> None:
    """Errors: -32601 for unknown requests."""
    reply = await server.call("textDocument/hover", {})
    assert reply["error"]["code"] == -32601, reply
    await still_serving(server)


async def test_unknown_notification_is_ignored(server: RawServer) -> None:
    """Errors: unknown notifications are ignored (no reply at all)."""
    await server.notify("textDocument/didOpen", {"textDocument": {}})
    await server.notify("$/setTrace", {"value": "off"})
    await still_serving(server)


@pytest.mark.parametrize(
    ("method", "params", "fields"),
    [
        ("session/prompt", {"sessionId": 5}, {"sessionId", "prompt"}),
        ("session/prompt", {"sessionId": "s", "prompt": [{"type": "image"}]}, None),
        ("session/load", {}, {"sessionId"}),
        ("session/new", {"askUserQuestion": {"mode": "sometimes"}}, {"askUserQuestion.mode"}),
        ("session/new", {"model": {"kind": "script", "steps": "x"}}, {"model.steps"}),
        ("userQuestions/answer", {"sessionId": "s", "callId": "c"}, {"answer"}),
        (
            "userQuestions/answer",
            {"sessionId": "s", "callId": "c", "answer": {"answers": [{"selected": "x"}]}},
            {"answer.answers.0.id", "answer.answers.0.selected"},
        ),
        ("userQuestions/attachWait", {"sessionId": "s", "callId": "c"}, {"partialResultToken"}),
        ("userQuestions/withdrawReply", {"sessionId": "s"}, {"callId"}),
        ("userQuestions/list", [], None),
        ("session/list", "not structured", None),
    ],
)
async def test_invalid_params_are_32602_with_data_errors(
    server: RawServer, method: str, params: object, fields: set[str] | None
) -> None:
    """Errors: missing required fields or wrong types → -32602 with data.errors per problem."""
    reply = await server.call(method, params)
    assert reply["error"]["code"] == -32602, reply
    if method != "session/list":
        errors = reply["error"]["data"]["errors"]
        assert errors and all(set(e) == {"field", "message"} for e in errors)
        if fields is not None:
            assert {e["field"] for e in errors} == fields
    await still_serving(server)


async def test_a_client_response_to_nothing_is_ignored(server: RawServer) -> None:
    """Errors: responses to ids the server never sent (or sends no longer) get no reply."""
    await server.respond("ab-999", {"answers": []})
    await server.respond_error(None, -32603, "confused client")
    await still_serving(server)


async def test_unknown_fields_in_client_messages_are_ignored(server: RawServer) -> None:
    """protocol.md: unknown fields in client messages are ignored."""
    reply = await server.call("session/list", {"cursor": "next", "extra": [1, 2]})
    assert reply["result"] == {"sessions": []}
