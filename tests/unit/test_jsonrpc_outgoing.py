"""The one outgoing-request engine (jsonrpc/outgoing.py) on its own, on a real pipe: what a
withdrawn request's reply becomes (A9, L7), the MCP dialect's withdrawal (X1–X6), what
`take` leaves to the caller, and the end of input.

The Connection's own tests (test_jsonrpc_connection.py) drive the same engine through
`conn.request`; the MCP door's (tests/mcp) through `askbridge mcp`.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import pytest

from askbridge.jsonrpc import (
    LSP,
    MCP,
    ConnectionClosed,
    Dialect,
    LineReader,
    MessageWriter,
    Outgoing,
    RpcResponseError,
    line_frame,
)
from askbridge.jsonrpc.stdio import open_read_pipe, open_write_pipe


@dataclass
class Peer:
    engine: Outgoing
    lines: LineReader

    async def recv(self) -> Any:
        with anyio.fail_after(5):
            frame = await self.lines.next_frame()
        assert frame is not None and frame.problem is None, frame
        return json.loads(frame.body)


@asynccontextmanager
async def engine(dialect: Dialect = LSP, id_prefix: str = "ab-") -> AsyncIterator[Peer]:
    read_fd, write_fd = os.pipe()
    out = await open_write_pipe(write_fd)
    try:
        lines = LineReader(await open_read_pipe(read_fd))
        yield Peer(Outgoing(MessageWriter(out, line_frame), dialect, id_prefix=id_prefix), lines)
    finally:
        out.close()


def reply(msg_id: str, **outcome: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, **outcome}


def records(caplog: pytest.LogCaptureFixture, text: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if text in r.getMessage()]


async def test_A9_a_withdrawn_card_closed_with_an_error_is_not_logged_as_a_late_reply(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """First answer wins elsewhere: the card is withdrawn and the client closes it with an
    error (-32800). That is the card closing, at DEBUG — not "dropped the late reply"."""
    caplog.set_level(logging.DEBUG, logger="askbridge.jsonrpc")
    async with engine() as peer:
        outcomes: list[Any] = []
        withdraw = peer.engine.request_with_callback(
            "userQuestions/ask", {}, lambda *o: outcomes.append(o)
        )
        sent = await peer.recv()
        withdraw()
        assert await peer.recv() == {
            "jsonrpc": "2.0",
            "method": "$/cancelRequest",
            "params": {"id": sent["id"]},
        }
        error = {"code": -32800, "message": "Request cancelled"}
        assert peer.engine.take(reply(sent["id"], error=error))
        assert outcomes == []  # withdrawn: on_done is never called
    assert records(caplog, "dropped the late reply") == []
    [closed] = records(caplog, "closed ab-1 after it was withdrawn")
    assert closed.levelno == logging.DEBUG


async def test_L7_a_result_after_withdrawal_goes_to_on_late_or_is_a_dropped_late_reply(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="askbridge.jsonrpc")
    async with engine() as peer:
        late: list[tuple[Any, RpcResponseError | None]] = []
        taken = peer.engine.request_with_callback("ask", {}, print, lambda *o: late.append(o))
        nobody = peer.engine.request_with_callback("ask", {}, print)
        first, second = (await peer.recv())["id"], (await peer.recv())["id"]
        taken()
        nobody()
        assert peer.engine.take(reply(first, result={"answers": []}))
        assert peer.engine.take(reply(second, result={"answers": []}))
        assert not peer.engine.take(reply(second, result={}))  # once only
    assert late == [({"answers": []}, None)]
    [dropped] = records(caplog, "dropped the late reply")
    assert dropped.levelno == logging.INFO and second in dropped.getMessage()


async def test_X1_the_mcp_dialect_withdraws_with_notifications_cancelled_and_a_reason() -> None:
    async with engine(MCP, id_prefix="askbridge-") as peer:
        async with anyio.create_task_group() as tg:

            async def elicit() -> None:
                await peer.engine.request("elicitation/create", {"message": "?"})

            tg.start_soon(elicit)
            sent = await peer.recv()
            assert sent["id"] == "askbridge-1" and sent["method"] == "elicitation/create"
            tg.cancel_scope.cancel()
        assert await peer.recv() == {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {
                "requestId": "askbridge-1",
                "reason": "askbridge no longer needs this answer",
            },
        }


async def test_take_leaves_requests_and_other_ids_to_the_caller() -> None:
    async with engine() as peer:
        results: list[Any] = []
        peer.engine.request_with_callback("ask", {}, lambda *o: results.append(o))
        sent = (await peer.recv())["id"]
        assert not peer.engine.take({"jsonrpc": "2.0", "id": sent, "method": "ask"})
        assert not peer.engine.take(reply("ab-99", result=1))
        assert not peer.engine.take({"jsonrpc": "2.0", "id": 1, "result": 1})  # ours are strings
        assert peer.engine.take({"jsonrpc": "2.0", "id": sent})  # S8: malformed, still ours
    [(value, error)] = results
    assert value is None and isinstance(error, RpcResponseError)


async def test_end_of_input_fails_what_is_outstanding_and_refuses_new_requests() -> None:
    async with engine() as peer:
        results: list[Any] = []
        peer.engine.request_with_callback("ask", {}, lambda *o: results.append(o))
        peer.engine.close("the peer's input ended")
        with pytest.raises(ConnectionClosed):
            await peer.engine.request("ask", {})
    [(value, error)] = results
    assert value is None and isinstance(error, ConnectionClosed)
