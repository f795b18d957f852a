"""What we send is `json.dumps(..., separators=(",", ":"), ensure_ascii=False)`, byte for
byte (jsonrpc/encoding.py, protocol/text.py: orjson makes it, json where they differ).

A card shown in every window (M2) and an update told to every follower are the same
params each time: each window's message is byte for byte what encoding it whole gives,
and a card's `id` is still its own connection's.
"""

from __future__ import annotations

import asyncio
import json
import math
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
from askbridge.jsonrpc import FrameReader, lsp_connection
from askbridge.jsonrpc.encoding import encode
from askbridge.jsonrpc.stdio import open_read_pipe, open_write_pipe
from askbridge.lsp.relay import LspRelay
from askbridge.protocol.text import compact_encoder, compact_json

pytestmark = pytest.mark.timeout(20)


def dumps(value: Any, *, allow_nan: bool = False) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=allow_nan)


# Beyond json_value: ints past 64 bits, non-string keys, tuples, floats of every size.
wider = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: "e" not in repr(f))
    | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=4) | st.integers() | st.booleans(), inner, max_size=4)
    ),
    max_leaves=12,
)


def _spelled_alike(value: Any) -> bool:
    """No float in exponent form, which orjson spells `1e-6` where json says `1e-06`."""
    if isinstance(value, float):
        return "e" not in repr(value)
    if isinstance(value, dict):
        return all(map(_spelled_alike, value.values()))
    if isinstance(value, list | tuple):
        return all(map(_spelled_alike, value))
    return True


@given((json_value | wider).filter(_spelled_alike))
def test_S3_compact_json_is_json_dumps_byte_for_byte(value: Any) -> None:
    """Lone surrogates included (`text` draws them): kept in the text, as json keeps them;
    escaped on the wire, so a frame stays valid UTF-8 JSON."""
    assert compact_json(value) == dumps(value)
    try:
        expected = dumps(value).encode()
    except UnicodeEncodeError:
        expected = json.dumps(value, separators=(",", ":")).encode()
    assert encode(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        {"é": "\u2028\u2029\x7f\x1f\U0001f600", "k": ['a"b\\c', None, True, -0.0, 1.5]},
        {"z": 1, "a": 2, "m": {"b": None, "a": [1, (2, None)]}},  # key order kept
        {"big": 2**70, 1: "int key", None: "null key"},
        {"pair": "\U0001f600", "lone": "\ud800x"},
        [[[[["deep", [[[[1.25]]]]]]]]] * 10,
    ],
    ids=["escapes-non-bmp", "key-order-nested-null", "big-int-odd-keys", "surrogates", "deep"],
)
def test_S3_the_cases_orjson_alone_would_spell_otherwise(value: Any) -> None:
    assert compact_json(value) == dumps(value)


def test_S3_nesting_past_orjsons_limit_is_json_dumps() -> None:
    value: Any = None
    for _ in range(300):
        value = [value]
    assert compact_json(value) == dumps(value)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_S3_nan_and_infinity_are_refused_not_written_as_null(bad: float) -> None:
    for value in (bad, {"x": bad}, {"x": [None, bad]}, [None, {"y": (bad,)}]):
        with pytest.raises(ValueError):
            compact_json(value)
        with pytest.raises(ValueError):
            encode(value)
    # What a model reads (host/agent/outcome.py) takes them as json.dumps does.
    assert compact_encoder(allow_nan=True)({"x": [None, bad]}) == dumps(
        {"x": [None, bad]}, allow_nan=True
    )


class _NotJson:
    pass


@pytest.mark.parametrize("bad", [_NotJson(), {1, 2}, b"bytes"])
def test_a_value_that_is_not_json_is_refused(bad: Any) -> None:
    with pytest.raises(TypeError):
        compact_json({"x": bad})


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


async def test_M2_a_card_in_two_windows_is_the_same_params_each_with_its_own_id() -> None:
    async with host_env(mode="legacy") as env, window(env.host) as one, window(env.host) as two:
        # Window two has one request of its own out already: its card's id is its next.
        two.relay.conn.request_with_callback(
            "window/workDoneProgress/create", {"token": "t"}, print
        )
        assert json.loads(await two.next_body("window/workDoneProgress/create"))["id"] == "ab-1"
        s = await env.host.new_session(
            one.relay.client, model=script(ask_step("c1"), text_step("ok"))
        )
        env.host.subscribe(two.relay.client, s)
        env.prompt(s.id, "go")
        card_one = await one.next_body("userQuestions/ask")
        card_two = await two.next_body("userQuestions/ask")
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
        s = await env.host.new_session(one.relay.client, model=script(text_step("hello")))
        env.host.subscribe(two.relay.client, s)
        env.prompt(s.id, "go")
        update_one = await one.next_body("session/update")
        assert update_one == await two.next_body("session/update")
        assert update_one == encode(json.loads(update_one))
        await settle()
