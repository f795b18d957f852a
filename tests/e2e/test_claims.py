"""protocol.md `userQuestions/attachWait`: client claims on timed waits (C1–C5, TW5, TW6).

Raw frames, so the exact `$/progress`, the held-open request, the `-32800`
answer to the client's `$/cancelRequest` and the server's own `$/cancelRequest`
are all visible. The timer rules are unit-tested with a manual clock; the one test
here that passes a deadline drives the host's clock (clock_host.py), in both host modes.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from e2e_scripts import SQLITE, ask_step, script, text_step

from askbridge.testing.wire import RawServer, is_response, updates_of
from clock_host import clock_host
from lsp_steps import until_ask

pytestmark = pytest.mark.timeout(60)


@asynccontextmanager
async def timed_ask(
    tmp_path: Path, timeout_s: int
) -> AsyncIterator[tuple[RawServer, str, dict[str, Any], int]]:
    """A server whose session has a timed ask outstanding: (server, sessionId, ask, prompt id)."""
    model = json.dumps(script(ask_step(), text_step("after")))
    args = ("--model", model, "--ask-mode", "timed", "--ask-timeout", str(timeout_s))
    async with RawServer.start(tmp_path / "data", *args) as server:
        sid, prompt_id, ask = await until_ask(server)
        assert ask["params"]["wait"] == {"callId": "call-1", "timed": True}
        yield server, sid, ask, prompt_id


def attach(sid: str, token: Any, call_id: str = "call-1") -> dict[str, Any]:
    return {"sessionId": sid, "callId": call_id, "partialResultToken": token}


async def test_claim_gets_one_progress_frame_and_is_held_until_the_wait_ends(
    tmp_path: Path,
) -> None:
    """C3: exactly one `$/progress {token, value: {remainingMs}}` (0 < remainingMs <= timeout),
    the request stays open while the claim is held, and is answered null when the wait ends
    (here: the client answers the card)."""
    async with timed_ask(tmp_path, 600) as (server, sid, ask, prompt_id):
        claim_id = await server.request("userQuestions/attachWait", attach(sid, "tok-1"))
        frame = await server.notification("$/progress")
        assert set(frame["params"]) == {"token", "value"} and frame["params"]["token"] == "tok-1"
        assert set(frame["params"]["value"]) == {"remainingMs"}
        assert 590_000 < frame["params"]["value"]["remainingMs"] <= 600_000
        # Held open: a later request is answered first, and nothing else arrived meanwhile.
        list_id = await server.request("userQuestions/list", {"sessionId": sid})
        reply = await server.response(list_id)
        assert reply["result"]["active"][0]["state"] == "open"
        assert not any(is_response(m) and m["id"] == claim_id for m in server.backlog)
        await server.respond(ask["id"], SQLITE)
        assert (await server.response(claim_id)) == {
            "jsonrpc": "2.0",
            "id": claim_id,
            "result": None,
        }
        assert (await server.response(prompt_id))["result"] == {"stopReason": "end_turn"}
        assert await server.shutdown_and_exit() == 0
        await server.read_to_end()
        assert [m for m in server.received if m.get("method") == "$/progress"] == [frame]


async def test_attach_without_a_wait_is_null_at_once_without_progress(tmp_path: Path) -> None:
    """C1: no wait for (agent, callId), or a wait that already ended → `null` at once, no progress."""
    async with timed_ask(tmp_path, 600) as (server, sid, ask, prompt_id):
        unknown = await server.call("userQuestions/attachWait", attach(sid, 1, "call-404"))
        assert unknown["result"] is None
        await server.respond(ask["id"], SQLITE)
        assert (await server.response(prompt_id))["result"] == {"stopReason": "end_turn"}
        ended = await server.call("userQuestions/attachWait", attach(sid, 2))
        assert ended["result"] is None
        assert await server.shutdown_and_exit() == 0
        await server.read_to_end()
        assert [m for m in server.received if m.get("method") == "$/progress"] == []


async def test_release_by_cancel_request_is_32800_and_the_wait_goes_on(tmp_path: Path) -> None:
    """C4: the client releases its claim with `$/cancelRequest`, answered -32800; the wait
    itself is not ended by the release (the card stays open and can still be answered), and
    claiming again gives a fresh single frame on the new token (C3, C5 with one claimant)."""
    async with timed_ask(tmp_path, 600) as (server, sid, ask, prompt_id):
        first = await server.request("userQuestions/attachWait", attach(sid, 10))
        await server.notification("$/progress", lambda p: p["token"] == 10)
        await server.notify("$/cancelRequest", {"id": first})
        released = await server.response(first)
        assert released["error"]["code"] == -32800
        second = await server.request("userQuestions/attachWait", attach(sid, 11))
        again = await server.notification("$/progress", lambda p: p["token"] == 11)
        assert 0 < again["params"]["value"]["remainingMs"] <= 600_000
        await server.respond(ask["id"], SQLITE)
        assert (await server.response(second))["result"] is None
        assert (await server.response(prompt_id))["result"] == {"stopReason": "end_turn"}
        await server.shutdown_and_exit()
        await server.read_to_end()
        [update] = updates_of(server.received, "tool_call_update")
        assert update["status"] == "completed"


async def test_TW5_TW6_claim_past_the_deadline_keeps_the_wait_then_release_means_pending(
    tmp_path: Path, host_mode: str
) -> None:
    """TW5/TW6 on the host's clock, driven (clock_host.py): a claim holds the wait alive
    past its deadline (the card stays open, the question `open`); releasing it after the
    deadline expires the wait at once: the server withdraws the card ($/cancelRequest),
    the tool returns pending, the turn goes on (not cancelled) and the question becomes
    `continued`."""
    model = json.dumps(script(ask_step(), text_step("after")))
    flags = ("--model", model, "--ask-mode", "timed", "--ask-timeout", "1")
    async with clock_host(tmp_path / "data", *flags) as host, host.client(host_mode) as server:
        sid, prompt_id, ask = await until_ask(server)
        claim_id = await server.request("userQuestions/attachWait", attach(sid, "c"))
        frame = await server.notification("$/progress")
        assert frame["params"]["value"]["remainingMs"] == 1000  # the clock has not moved
        await host.advance(1300)  # past the deadline, claim held
        view = await server.call("userQuestions/list", {"sessionId": sid})
        assert view["result"]["active"][0]["state"] == "open"
        assert not [m for m in server.backlog if m.get("method") == "$/cancelRequest"]
        await server.notify("$/cancelRequest", {"id": claim_id})
        assert (await server.response(claim_id))["error"]["code"] == -32800
        withdrawn = await server.notification("$/cancelRequest", timeout=5)
        assert withdrawn["params"] == {"id": ask["id"]}
        assert (await server.response(prompt_id))["result"] == {"stopReason": "end_turn"}
        await server.respond_error(ask["id"], -32800, "Request cancelled")
        view = await server.call("userQuestions/list", {"sessionId": sid})
        assert view["result"]["active"][0]["state"] == "continued"
        await server.shutdown_and_exit()
        await server.read_to_end()
        [update] = updates_of(server.received, "tool_call_update")
        assert json.loads(update["content"][0]["content"]["text"])["pending"] is True
