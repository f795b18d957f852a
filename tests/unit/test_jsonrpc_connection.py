"""The JSON-RPC dispatcher over real pipes (protocol.md "Errors", E2, A9).

`served()` runs a Connection (LSP framing) on one pair of os.pipe()s and gives the test a
client speaking raw frames on the other ends; the last test runs a tiny server
built on lsp_connection + open_stdio in a real subprocess over its stdin/stdout.
"Nothing was answered" is checked by ordering: a later request's reply must be
the next message, never by sleeping.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import pydantic
import pytest

from askbridge.core.errors import SessionError, UserQuestionError, error_from_wire
from askbridge.jsonrpc import (
    Connection,
    ConnectionClosed,
    FrameReader,
    LspFramer,
    MalformedReply,
    MessageWriter,
    RpcError,
    RpcResponseError,
)
from askbridge.jsonrpc.stdio import open_inbound, open_read_pipe, open_write_pipe
from askbridge.protocol.errors import FIXED_MESSAGES, ErrorCode
from askbridge.protocol.parsing import InvalidParams, parse_params


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class Client:
    """The client side: raw frames on real pipes."""

    def __init__(self, frames: FrameReader, stream: asyncio.StreamWriter) -> None:
        self.frames = frames
        self.stream = stream
        self.out = MessageWriter(stream)

    async def send(self, obj: Any) -> None:
        await self.out.write(obj)

    def send_raw(self, data: bytes) -> None:
        self.stream.write(data)

    async def request(self, msg_id: int | str, method: str, params: Any = None) -> None:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            msg["params"] = params
        await self.send(msg)

    async def recv(self) -> Any:
        with anyio.fail_after(5):
            got = await self.frames.next_frame()
        assert got is not None and got.problem is None, got
        return json.loads(got.body)

    async def call(self, msg_id: int | str, method: str, params: Any = None) -> Any:
        await self.request(msg_id, method, params)
        reply = await self.recv()
        assert reply["id"] == msg_id, reply
        return reply

    def close(self) -> None:
        if not self.stream.is_closing():
            self.stream.close()


async def echo(params: Any) -> Any:
    return {"params": params, "type": type(params).__name__}


@dataclass
class Served:
    conn: Connection
    client: Client
    ended: anyio.Event


@asynccontextmanager
async def served(
    setup: Callable[[Connection], None] | None = None, max_body: int | None = None
) -> AsyncIterator[Served]:
    c2s_read, c2s_write = os.pipe()
    s2c_read, s2c_write = os.pipe()
    server_out = await open_write_pipe(s2c_write)
    inbound = await open_inbound(c2s_read)  # the read pipe's protocol, as the doors read
    inbound.use(LspFramer() if max_body is None else LspFramer(max_body=max_body))
    conn = Connection(inbound, MessageWriter(server_out))
    conn.on_request("echo", echo)
    if setup is not None:
        setup(conn)
    client = Client(FrameReader(await open_read_pipe(s2c_read)), await open_write_pipe(c2s_write))
    ended = anyio.Event()

    async def run() -> None:
        await conn.serve()
        ended.set()

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            yield Served(conn, client, ended)
            client.close()
            with anyio.fail_after(5):
                await ended.wait()
    finally:
        client.close()
        server_out.close()


async def test_request_response_hands_raw_params_to_handlers() -> None:
    async with served() as s:
        by_dict = await s.client.call(1, "echo", {"a": [1, {"b": None}]})
        assert by_dict["result"] == {"params": {"a": [1, {"b": None}]}, "type": "dict"}
        by_list = await s.client.call("req-2", "echo", [1, "two"])
        assert by_list["result"] == {"params": [1, "two"], "type": "list"}
        absent = await s.client.call(3, "echo")
        assert absent == {"jsonrpc": "2.0", "id": 3, "result": {"params": None, "type": "NoneType"}}


async def test_invalid_json_is_parse_error_with_null_id_and_serving_continues() -> None:
    """protocol.md Errors: -32700 with id null; the server keeps running."""
    async with served() as s:
        for body in (b'{"jsonrpc": "2.0", "id": 1, ', b'"\xff\xfe"'):
            s.client.send_raw(frame(body))
            reply = await s.client.recv()
            assert reply["id"] is None and reply["error"]["code"] == -32700, reply
        assert (await s.client.call(2, "echo"))["result"]["type"] == "NoneType"


NOT_JSON_RPC: list[tuple[Any, Any]] = [
    ([{"jsonrpc": "2.0", "id": 1, "method": "echo"}], None),  # batches are refused
    (42, None),
    ("echo", None),
    (None, None),
    ({"id": 3, "method": "echo"}, 3),  # no jsonrpc member; the id is readable
    ({"jsonrpc": "1.0", "id": "x", "method": "echo"}, "x"),
    ({"jsonrpc": "2.0", "id": 1.5, "method": "echo"}, None),
    ({"jsonrpc": "2.0", "id": True, "method": "echo"}, None),
    ({"jsonrpc": "2.0", "id": {"n": 1}, "method": "echo"}, None),
    ({"jsonrpc": "2.0", "id": None, "method": "echo"}, None),
    ({"jsonrpc": "2.0", "id": 4, "method": 5}, 4),
    ({"jsonrpc": "2.0", "method": ["echo"]}, None),
    ({"jsonrpc": "2.0", "id": 5}, 5),  # neither request, notification nor response
]


async def test_json_that_is_not_json_rpc_is_invalid_request() -> None:
    """protocol.md Errors: -32600 for JSON that is not JSON-RPC, id null unless readable."""
    async with served() as s:
        for message, expected_id in NOT_JSON_RPC:
            await s.client.send(message)
            reply = await s.client.recv()
            assert reply["error"]["code"] == -32600, (message, reply)
            assert reply["id"] == expected_id, (message, reply)
        assert "result" in await s.client.call(6, "echo")


async def test_unknown_request_is_method_not_found_and_unknown_notification_ignored() -> None:
    """protocol.md Errors: -32601 for unknown requests; unknown notifications are ignored."""
    async with served() as s:
        reply = await s.client.call("q", "no/such", {})
        assert reply["error"]["code"] == -32601 and "no/such" in reply["error"]["message"]
        await s.client.send({"jsonrpc": "2.0", "method": "no/such", "params": {}})
        await s.client.send({"jsonrpc": "2.0", "method": "$/setTrace", "params": {}})
        assert "result" in await s.client.call(7, "echo")  # the next message is this reply


class Settings(pydantic.BaseModel):
    timeout: int


def invalid_params_handlers(conn: Connection) -> None:
    async def explicit(params: Any) -> Any:
        raise InvalidParams([{"field": "sessionId", "message": "Field required"}])

    async def parsed(params: Any) -> Any:
        return parse_params(Settings, params).timeout

    async def teapot(params: Any) -> Any:
        raise RpcError(-32099, "custom", {"why": "because"})

    async def validated(params: Any) -> Any:
        return Settings.model_validate(params).timeout

    conn.on_request("explicit", explicit)
    conn.on_request("teapot", teapot)
    conn.on_request("validated", validated)
    conn.on_request("parsed", parsed)


async def test_invalid_params_and_explicit_rpc_errors() -> None:
    """protocol.md: -32602 InvalidParams with data.errors describing each problem."""
    async with served(invalid_params_handlers) as s:
        reply = await s.client.call(1, "explicit", {})
        assert reply["error"] == {
            "code": -32602,
            "message": "invalid params: sessionId: Field required",
            "data": {"errors": [{"field": "sessionId", "message": "Field required"}]},
        }
        reply = await s.client.call(2, "teapot")
        assert reply["error"] == {"code": -32099, "message": "custom", "data": {"why": "because"}}
        for msg_id, method in ((3, "parsed"), (4, "validated")):  # a bare ValidationError too
            reply = await s.client.call(msg_id, method, {"timeout": "soon"})
            assert reply["error"]["code"] == -32602
            [problem] = reply["error"]["data"]["errors"]
            assert problem["field"] == "timeout" and "integer" in problem["message"]
            assert (await s.client.call(msg_id + 10, method, {"timeout": 3}))["result"] == 3
        reply = await s.client.call(5, "echo", "not structured")  # type: ignore[arg-type]
        assert reply["error"]["code"] == -32602


def failing_handlers(conn: Connection) -> None:
    async def reply_queued(params: Any) -> Any:
        raise UserQuestionError.of(ErrorCode.REPLY_QUEUED)

    async def unknown_session(params: Any) -> Any:
        raise SessionError.unknown("s-404")

    async def grouped(params: Any) -> Any:
        raise ExceptionGroup("task group", [UserQuestionError.of(ErrorCode.ASK_CANCELLED)])

    async def boom(params: Any) -> Any:
        raise RuntimeError("boom")

    async def not_json(params: Any) -> Any:
        return {"when": object()}

    for fn in (reply_queued, unknown_session, grouped, boom, not_json):
        conn.on_request(fn.__name__, fn)


async def test_harness_errors_are_domain_errors_with_name_and_code() -> None:
    """E2 / protocol.md Errors: -32000, message = the rule's message, data = {name, code}."""
    async with served(failing_handlers) as s:
        reply = await s.client.call(1, "reply_queued")
        assert reply["error"] == {
            "code": -32000,
            "message": FIXED_MESSAGES[ErrorCode.REPLY_QUEUED],
            "data": {"name": "UserQuestionError", "code": "REPLY_QUEUED"},
        }
        rebuilt = error_from_wire(reply["error"]["message"], reply["error"]["data"])
        assert isinstance(rebuilt, UserQuestionError) and rebuilt.code == "REPLY_QUEUED"
        reply = await s.client.call(2, "unknown_session")
        assert reply["error"] == {
            "code": -32000,
            "message": "unknown session s-404",
            "data": {"name": "SessionError", "code": "UNKNOWN_SESSION"},
        }
        reply = await s.client.call(3, "grouped")  # a lone error out of a task group
        assert reply["error"]["data"] == {"name": "UserQuestionError", "code": "ASK_CANCELLED"}


async def test_other_exceptions_are_internal_errors_logged_with_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """protocol.md Errors: anything else is -32603 with its message; the server keeps serving."""
    caplog.set_level(logging.DEBUG, logger="askbridge.jsonrpc")
    async with served(failing_handlers) as s:
        reply = await s.client.call(1, "boom")
        assert reply["error"] == {"code": -32603, "message": "boom"}
        reply = await s.client.call(2, "not_json")
        assert reply["error"]["code"] == -32603 and "not JSON" in reply["error"]["message"]
        assert "result" in await s.client.call(3, "echo")
    logged = [r for r in caplog.records if r.name == "askbridge.jsonrpc" and r.exc_info]
    assert [type(r.exc_info[1]) for r in logged if r.exc_info] == [RuntimeError, TypeError]


def blocking_handlers(log: list[str], release: anyio.Event) -> Callable[[Connection], None]:
    def setup(conn: Connection) -> None:
        async def block(params: Any) -> Any:
            log.append(f"started {params[0]}")
            try:
                await release.wait()
                return "released"
            finally:
                log.append(f"finished {params[0]}")

        async def note(params: Any) -> None:
            log.append(f"note {params[0]}")

        async def broken_note(params: Any) -> None:
            raise RuntimeError("notification bug")

        conn.on_request("block", block)
        conn.on_notification("note", note)
        conn.on_notification("broken", broken_note)

    return setup


async def test_cancel_request_cancels_that_handler_and_replies_request_cancelled() -> None:
    """protocol.md: the client's $/cancelRequest for a request is answered -32800."""
    log: list[str] = []
    async with served(blocking_handlers(log, anyio.Event())) as s:
        await s.client.request(1, "block", ["a"])
        await s.client.request(2, "block", ["b"])
        await s.client.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 1}})
        reply = await s.client.recv()
        assert reply == {
            "jsonrpc": "2.0",
            "id": 1,
            "error": {"code": -32800, "message": "Request cancelled"},
        }
        assert log == ["started a", "started b", "finished a"]  # request 2 still runs
        await s.client.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 99}})
        await s.client.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 2}})
        assert (await s.client.recv())["id"] == 2


async def test_notification_right_behind_a_request_sees_it_started() -> None:
    """Handlers start in arrival order, so a cancel-like notification finds the request."""
    log: list[str] = []
    release = anyio.Event()
    async with served(blocking_handlers(log, release)) as s:
        s.client.send_raw(
            frame(b'{"jsonrpc":"2.0","id":1,"method":"block","params":["p"]}')
            + frame(b'{"jsonrpc":"2.0","method":"broken"}')
            + frame(b'{"jsonrpc":"2.0","method":"note","params":["n"]}')
            + frame(b'{"jsonrpc":"2.0","id":1,"method":"block","params":["dup"]}')
        )
        reply = await s.client.recv()
        assert reply["id"] == 1 and reply["error"]["code"] == -32600  # duplicate in-flight id
        assert log == ["started p", "note n"]
        release.set()
        assert (await s.client.recv())["result"] == "released"


def asking_handlers(conn: Connection) -> None:
    async def ask(params: Any) -> Any:
        return await conn.request("client/ask", params)

    conn.on_request("ask", ask)


async def test_notify_is_queued_at_once_from_sync_code() -> None:
    async with served() as s:
        s.conn.notify("userQuestions/didChange", {"sessionId": "s-1", "view": {}})
        s.conn.notify("initialized")
        assert await s.client.recv() == {
            "jsonrpc": "2.0",
            "method": "userQuestions/didChange",
            "params": {"sessionId": "s-1", "view": {}},
        }
        assert await s.client.recv() == {"jsonrpc": "2.0", "method": "initialized"}


async def test_outgoing_requests_use_string_ids_and_get_results() -> None:
    async with served(asking_handlers) as s:
        await s.client.request(1, "ask", {"q": "db?"})
        outgoing = await s.client.recv()
        assert outgoing == {
            "jsonrpc": "2.0",
            "id": "ab-1",
            "method": "client/ask",
            "params": {"q": "db?"},
        }
        await s.client.send({"jsonrpc": "2.0", "id": "ab-1", "result": {"answers": ["SQLite"]}})
        assert (await s.client.recv()) == {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {"answers": ["SQLite"]},
        }
        async with anyio.create_task_group() as tg:
            results: list[Any] = []

            async def ask_directly() -> None:
                results.append(await s.conn.request("client/ping"))

            tg.start_soon(ask_directly)
            assert await s.client.recv() == {
                "jsonrpc": "2.0",
                "id": "ab-2",
                "method": "client/ping",
            }
            await s.client.send({"jsonrpc": "2.0", "id": "ab-2", "result": None})
        assert results == [None]


async def test_outgoing_error_reply_carries_data_for_error_from_wire() -> None:
    """E2: a client error with data {name, code} is rebuilt as that UserQuestionError."""
    async with served() as s:
        async with anyio.create_task_group() as tg:
            errors: list[RpcResponseError] = []

            async def ask() -> None:
                with pytest.raises(RpcResponseError) as caught:
                    await s.conn.request("userQuestions/ask", {})
                errors.append(caught.value)

            tg.start_soon(ask)
            sent = await s.client.recv()
            data = {"name": "UserQuestionError", "code": "ASK_TIMED_OUT"}
            error = {"code": -32000, "message": "countdown over", "data": data}
            await s.client.send({"jsonrpc": "2.0", "id": sent["id"], "error": error})
        [failure] = errors
        assert (failure.code, failure.message, failure.data) == (-32000, "countdown over", data)
        rebuilt = error_from_wire(failure.message, failure.data)
        assert isinstance(rebuilt, UserQuestionError) and rebuilt.code == "ASK_TIMED_OUT"
        assert rebuilt.message == FIXED_MESSAGES[ErrorCode.ASK_TIMED_OUT]


async def test_cancelled_outgoing_request_sends_cancel_without_waiting_and_drops_late_reply(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A9: the server tells the client to close the card and never waits for it to agree."""
    caplog.set_level(logging.DEBUG, logger="askbridge.jsonrpc")
    async with served() as s:
        outcome: list[str] = []
        async with anyio.create_task_group() as tg:

            async def ask() -> None:
                with anyio.CancelScope() as scope:
                    scopes.append(scope)
                    await s.conn.request("userQuestions/ask", {"n": 1})
                outcome.append("cancelled" if scope.cancelled_caught else "answered")

            scopes: list[anyio.CancelScope] = []
            tg.start_soon(ask)
            sent = await s.client.recv()
            scopes[0].cancel()  # the client stays silent: the ask must still end at once
        assert outcome == ["cancelled"]
        assert await s.client.recv() == {
            "jsonrpc": "2.0",
            "method": "$/cancelRequest",
            "params": {"id": sent["id"]},
        }
        with pytest.raises(TimeoutError):
            await s.conn.request("userQuestions/ask", {"n": 2}, timeout=0.05)
        timed_out = await s.client.recv()
        assert await s.client.recv() == {
            "jsonrpc": "2.0",
            "method": "$/cancelRequest",
            "params": {"id": timed_out["id"]},
        }
        for late in (sent, timed_out):  # late replies (and a -32800) are dropped quietly
            await s.client.send({"jsonrpc": "2.0", "id": late["id"], "result": {"answers": []}})
        await s.client.send(
            {"jsonrpc": "2.0", "id": sent["id"], "error": {"code": -32800, "message": "x"}}
        )
        assert "result" in await s.client.call(1, "echo")
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


async def test_responses_with_unknown_ids_are_ignored(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="askbridge.jsonrpc")
    async with served() as s:
        await s.client.send({"jsonrpc": "2.0", "id": "ab-99", "result": 1})
        await s.client.send({"jsonrpc": "2.0", "id": 1, "result": 1})  # ours are strings
        await s.client.send({"jsonrpc": "2.0", "id": [1], "error": {"code": 1, "message": "?"}})
        await s.client.send(
            {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "x"}}
        )
        reply = await s.client.call(2, "echo")  # nothing was answered before this reply
        assert "result" in reply
    ignored = [r for r in caplog.records if "unknown or settled id" in r.getMessage()]
    assert len(ignored) == 3 and all(r.levelno == logging.INFO for r in ignored)


async def test_end_of_input_ends_serve_fails_outgoing_and_cancels_incoming() -> None:
    """protocol.md Lifecycle: end of input ends everything cleanly."""
    log: list[str] = []
    async with served(blocking_handlers(log, anyio.Event())) as s:
        failures: list[BaseException] = []
        async with anyio.create_task_group() as tg:

            async def ask() -> None:
                try:
                    await s.conn.request("userQuestions/ask")
                except ConnectionClosed as exc:
                    failures.append(exc)

            tg.start_soon(ask)
            await s.client.recv()
            await s.client.call(1, "echo")
            await s.client.request(2, "block", ["open"])
            await s.client.send({"jsonrpc": "2.0", "method": "note", "params": ["sync"]})
            await s.client.call(3, "echo")
            s.client.close()
            with anyio.fail_after(5):
                await s.ended.wait()
        assert len(failures) == 1 and s.conn.closed
        assert log == ["started open", "note sync", "finished open"]
        with pytest.raises(ConnectionClosed):
            await s.conn.request("late")
        s.conn.notify("late")  # dropped quietly
    with anyio.fail_after(5):
        assert await s.client.frames.next_frame() is None  # no reply for the cancelled request


async def test_oversized_and_malformed_frames_are_invalid_request_and_serving_continues() -> None:
    """protocol.md Errors: over the cap → -32600 id null, bytes discarded; bad header skipped."""
    async with served(max_body=64) as s:
        s.client.send_raw(frame(b'{"jsonrpc":"2.0","id":9,"method":"echo","params":"' + b"x" * 64))
        reply = await s.client.recv()
        assert reply["id"] is None and reply["error"]["code"] == -32600
        assert "oversized" in reply["error"]["message"]
        assert "result" in await s.client.call(1, "echo")
        s.client.send_raw(b"GET / HTTP/1.1\r\n\r\n")
        reply = await s.client.recv()
        assert reply["id"] is None and reply["error"]["code"] == -32600
        assert "malformed" in reply["error"]["message"]
        assert "result" in await s.client.call(2, "echo")


SERVER = """
import os, anyio
from askbridge.jsonrpc.stdio import open_stdio
from askbridge.jsonrpc import lsp_connection

async def main():
    reader, writer = await open_stdio()
    conn = lsp_connection(reader, writer)

    async def echo(params):
        print("stray print")
        os.write(1, b"stray fd write\\n")
        return params

    async def ask(params):
        return await conn.request("client/ask", params)

    conn.on_request("echo", echo)
    conn.on_request("ask", ask)
    await conn.serve()
    writer.close()

anyio.run(main)
"""


async def test_real_subprocess_over_stdio() -> None:
    """The wire over a real process's stdin/stdout: stdout carries frames only."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        SERVER,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    client = Client(FrameReader(proc.stdout), proc.stdin)
    try:
        assert (await client.call(1, "echo", {"x": "é"}))["result"] == {"x": "é"}
        client.send_raw(frame(b"{oops"))
        assert (await client.recv())["error"]["code"] == -32700
        await client.request(2, "ask", ["q"])
        outgoing = await client.recv()
        assert outgoing["method"] == "client/ask" and outgoing["id"] == "ab-1"
        await client.send({"jsonrpc": "2.0", "id": "ab-1", "result": "answer"})
        assert (await client.recv())["result"] == "answer"
        client.close()
        with anyio.fail_after(10):
            assert await client.frames.next_frame() is None
            assert await proc.wait() == 0
            stderr = await proc.stderr.read()
        assert b"stray print" in stderr and b"stray fd write" in stderr
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


# -- hostile input (S3, S8, S9) ------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        b"[" * 100_000 + b"]" * 100_000,
        b'{"a":' * 5_000 + b"1" + b"}" * 5_000,
        b"NaN",
        b'{"x": Infinity}',
    ],
    ids=["deep-array", "deep-object", "nan", "infinity"],
)
async def test_S3_too_deep_or_non_json_numbers_are_parse_errors(body: bytes) -> None:
    async with served() as s:
        s.client.send_raw(frame(body))
        reply = await s.client.recv()
        assert reply["id"] is None and reply["error"]["code"] == -32700, reply
        assert "result" in await s.client.call(1, "echo")


async def test_S3_a_lone_surrogate_in_params_is_invalid_params_naming_the_field() -> None:
    async with served() as s:
        s.client.send_raw(
            frame(b'{"jsonrpc":"2.0","id":1,"method":"echo","params":{"p":[{"text":"a\\ud800"}]}}')
        )
        reply = await s.client.recv()
        assert reply["id"] == 1 and reply["error"]["code"] == -32602
        assert reply["error"]["data"]["errors"][0]["field"] == "p.0.text"
        # A valid pair is one character, not a lone surrogate.
        s.client.send_raw(
            frame(b'{"jsonrpc":"2.0","id":2,"method":"echo","params":["\\ud83d\\ude00"]}')
        )
        assert (await s.client.recv())["result"]["params"] == ["\U0001f600"]


async def test_S3_a_peer_error_message_with_a_lone_surrogate_is_kept_with_a_replacement() -> None:
    got: list[Any] = []

    def setup(conn: Connection) -> None:
        async def ask(params: Any) -> Any:
            try:
                await conn.request("client/ask", None)
            except RpcResponseError as exc:
                got.append(exc.message)
            return "ok"

        conn.on_request("ask", ask)

    async with served(setup) as s:
        await s.client.request(1, "ask")
        outgoing = await s.client.recv()
        s.client.send_raw(
            frame(
                b'{"jsonrpc":"2.0","id":"%s","error":{"code":1,"message":"no\\udc00"}}'
                % outgoing["id"].encode()
            )
        )
        assert (await s.client.recv())["result"] == "ok"
    assert got == ["no\ufffd"]


@pytest.mark.parametrize("reply", [{}, {"error": "boom"}, {"error": {"message": "no code"}}])
async def test_S8_a_response_without_result_or_error_is_an_error_reply_never_answered(
    reply: dict[str, Any],
) -> None:
    got: list[Exception] = []

    def setup(conn: Connection) -> None:
        async def ask(params: Any) -> Any:
            try:
                await conn.request("client/ask", None)
            except RpcResponseError as exc:
                got.append(exc)
            return "done"

        conn.on_request("ask", ask)

    async with served(setup) as s:
        await s.client.request(1, "ask")
        outgoing = await s.client.recv()
        await s.client.send({"jsonrpc": "2.0", "id": outgoing["id"], **reply})
        # The next message is the handler's reply: the malformed response got none.
        assert await s.client.recv() == {"jsonrpc": "2.0", "id": 1, "result": "done"}
    assert len(got) == 1 and isinstance(got[0], MalformedReply)


def _request(msg_id: int, method: str = "echo") -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method}).encode()


@pytest.mark.parametrize("excess", [-10, 5, 12, 19, 40])
async def test_S8_after_a_wrong_content_length_the_next_valid_request_is_answered(
    excess: int,
) -> None:
    """A too-short length leaves the body's tail in front of the next header on one line; a
    too-long one swallows the start of the next frame. Either way the next frame is found."""
    async with served() as s:
        body = _request(1)
        following = frame(_request(2))
        s.client.send_raw(b"Content-Length: %d\r\n\r\n" % (len(body) + excess) + body + following)
        if excess > 0 and excess >= len(following):
            return
        errors = []
        while (reply := await s.client.recv()).get("id") != 2:
            errors.append(reply)
        assert reply["result"] == {"params": None, "type": "NoneType"}
        assert errors and all(
            e["id"] is None and e["error"]["code"] in (-32700, -32600) for e in errors
        )
        assert "result" in await s.client.call(3, "echo")


async def test_S9_after_refuse_requests_every_request_is_invalid_request() -> None:
    def setup(conn: Connection) -> None:
        async def shutdown(params: Any) -> None:
            conn.refuse_requests("the server is shutting down: only exit is accepted")

        conn.on_request("shutdown", shutdown)

    async with served(setup) as s:
        assert (await s.client.call(1, "shutdown"))["result"] is None
        reply = await s.client.call(2, "echo")
        assert reply["error"]["code"] == -32600 and "shutting down" in reply["error"]["message"]


async def test_L7_a_late_reply_to_a_withdrawn_request_reaches_its_on_late_callback() -> None:
    late: list[tuple[Any, Any]] = []

    def setup(conn: Connection) -> None:
        async def ask(params: Any) -> Any:
            with anyio.move_on_after(0.05):
                await conn.request("client/ask", None, on_late=lambda r, e: late.append((r, e)))
            return "withdrawn"

        conn.on_request("ask", ask)

    async with served(setup) as s:
        await s.client.request(1, "ask")
        outgoing = await s.client.recv()
        cancel = await s.client.recv()
        assert cancel == {
            "jsonrpc": "2.0",
            "method": "$/cancelRequest",
            "params": {"id": outgoing["id"]},
        }
        assert (await s.client.recv())["result"] == "withdrawn"
        await s.client.send({"jsonrpc": "2.0", "id": outgoing["id"], "result": {"late": True}})
        assert "result" in await s.client.call(2, "echo")
    assert late == [({"late": True}, None)]


@pytest.mark.parametrize("ending", ["end of input", "stop"])
async def test_when_closed_runs_once_after_outgoing_failed_and_before_incoming_is_cancelled(
    ending: str,
) -> None:
    """A door marks its work as cut off (the MCP door's X6) before that work is cancelled."""
    seen: list[str] = []

    async def block(params: Any) -> None:
        try:
            await anyio.sleep_forever()
        finally:
            seen.append("incoming cancelled")

    def setup(conn: Connection) -> None:
        conn.on_request("block", block)
        conn.when_closed(lambda: seen.append("closed"))

    async with served(setup) as s:
        s.conn.request_with_callback(
            "ask", None, lambda result, error: seen.append("outgoing failed")
        )
        await s.client.recv()
        await s.client.request(1, "block")
        await s.client.call(2, "echo")  # read after block started
        if ending == "stop":
            s.conn.stop()
        else:
            s.client.close()
        with anyio.fail_after(5):
            await s.ended.wait()
    assert seen == ["outgoing failed", "closed", "incoming cancelled"]
