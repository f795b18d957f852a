"""One message for several peers, encoded once (jsonrpc/encoding.py; issue 19 target g).

A question shown in every window (M2) and an update told to every follower are
the same params each time: the LSP door encodes them once and the writer
splices those bytes into each window's message. What a client can see must not
change: each message is byte for byte what encoding it whole gives, and a
card's `id` is still its own connection's.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import pytest
from host_helpers import ask_step, host_env, q, script, settle, text_step
from hypothesis import given
from hypothesis import strategies as st
from protocol_strategies import json_value

from askbridge.host.host import Host
from askbridge.jsonrpc import (
    Encoded,
    FrameReader,
    OncePerTurn,
    line_frame,
    lsp_connection,
    lsp_frame,
)
from askbridge.jsonrpc import messages as m
from askbridge.jsonrpc.encoding import Framer, encode, frame_message
from askbridge.lsp import relay
from askbridge.lsp.relay import LspRelay
from askbridge.stdio import open_read_pipe, open_write_pipe

pytestmark = pytest.mark.timeout(20)

methods = st.sampled_from(["userQuestions/ask", "session/update", "é/ü", "$/cancelRequest"])
ids = st.one_of(st.none(), st.integers(min_value=0), st.text(max_size=8))


@given(methods, json_value, ids, st.sampled_from([lsp_frame, line_frame]))
def test_encoded_params_give_the_bytes_of_the_whole_message(
    method: str, params: Any, msg_id: Any, frame: Framer
) -> None:
    """Lone surrogates included (`text` draws them): their escaped fallback is the same."""
    msg = m.call(method, params, msg_id)
    if params is None:
        return  # `call` leaves out params that are None: nothing to splice
    shared = Encoded(params)
    assert frame_message(m.call(method, shared, msg_id), frame) == frame(encode(msg))
    if msg_id is None:  # a notification: framed once, the same bytes for every peer
        assert frame_message(m.call(method, shared), frame) is shared.notification(method, frame)


async def test_once_per_turn_is_one_encoding_per_object_and_tag_until_the_next_turn() -> None:
    shared, update = OncePerTurn(), {"kind": "text", "text": "é"}
    builds: list[str] = []

    def build(obj: dict[str, Any], tag: str) -> dict[str, Any]:
        builds.append(tag)
        return {"sessionId": tag, "update": obj}

    first = shared.get(update, "s-1", build)
    assert shared.get(update, "s-1", build) is first
    assert shared.get(dict(update), "s-1", build) is not first  # equal is not the same
    assert shared.get(update, "s-2", build).json == encode({"sessionId": "s-2", "update": update})
    await anyio.lowlevel.checkpoint()
    update["text"] = "changed"  # next turn: encoded anew
    assert shared.get(update, "s-1", build).json == encode({"sessionId": "s-1", "update": update})
    assert builds == ["s-1", "s-1", "s-2", "s-1"]


# -- two LSP windows on one host ------------------------------------------------------------


@dataclass
class Window:
    """An LSP relay attached to the host, writing to a pipe this test reads raw."""

    relay: LspRelay
    frames: FrameReader

    async def next_body(self, method: str) -> bytes:
        while True:
            with anyio.fail_after(5):
                frame = await self.frames.next_frame()
            assert frame is not None and frame.problem is None, frame
            if json.loads(frame.body).get("method") == method:
                return frame.body


@asynccontextmanager
async def window(host: Host) -> AsyncIterator[Window]:
    read_fd, write_fd = os.pipe()
    out = await open_write_pipe(write_fd)
    try:
        conn = lsp_connection(asyncio.StreamReader(), out)  # its input is never read here
        link = LspRelay(conn, host)
        link.renders_questions = True
        link.client = host.attach(link, {})
        yield Window(link, FrameReader(await open_read_pipe(read_fd)))
    finally:
        out.close()


def params_of(body: bytes) -> bytes:
    _, sep, params = body.partition(b',"params":')
    assert sep, body
    return params


async def test_M2_a_card_in_two_windows_is_encoded_once_each_with_its_own_id(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built: list[str | None] = []
    ask_encoded = relay._ask_encoded

    def counted(request: Any, session_id: str | None) -> Any:
        built.append(session_id)
        return ask_encoded(request, session_id)

    monkeypatch.setattr(relay, "_ask_encoded", counted)
    async with host_env(mode="legacy") as env, window(env.host) as one, window(env.host) as two:
        # Window two has one request of its own out already: its card's id is its next.
        two.relay.conn.request_soon("window/workDoneProgress/create", {"token": "t"}, print)
        assert json.loads(await two.next_body("window/workDoneProgress/create"))["id"] == "ab-1"
        s = env.host.new_session(one.relay.client, model=script(ask_step("c1"), text_step("ok")))
        env.host.subscribe(two.relay.client, s)
        env.prompt(s.id, "go")
        card_one = await one.next_body("userQuestions/ask")
        card_two = await two.next_body("userQuestions/ask")
        assert built == [s.id]  # the params were built (and encoded) once for both windows
        assert params_of(card_one) == params_of(card_two)
        first, second = json.loads(card_one), json.loads(card_two)
        assert (first["id"], second["id"]) == ("ab-1", "ab-2")
        assert first["params"]["questions"][0]["id"] == q()["id"]
        for body in (card_one, card_two):  # what encoding the whole message gives
            assert body == encode(json.loads(body))
        # Window one answers: window two's card is withdrawn (M2, A9).
        one.relay.conn.outgoing.take(
            {
                "jsonrpc": "2.0",
                "id": "ab-1",
                "result": {"answers": [{"id": "db", "selected": ["x"]}]},
            }
        )
        cancel = json.loads(await two.next_body("$/cancelRequest"))
        assert cancel["params"] == {"id": "ab-2"}
        await settle()


async def test_D1_an_update_reaches_every_follower_as_the_same_bytes() -> None:
    async with host_env(mode="legacy") as env, window(env.host) as one, window(env.host) as two:
        s = env.host.new_session(one.relay.client, model=script(text_step("hello")))
        env.host.subscribe(two.relay.client, s)
        env.prompt(s.id, "go")
        update_one = await one.next_body("session/update")
        assert update_one == await two.next_body("session/update")
        assert update_one == encode(json.loads(update_one))
        await settle()
