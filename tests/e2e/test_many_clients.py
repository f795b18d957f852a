"""Many clients on one host (behavior.md M1–M7), with two and three real front doors.

The first client starts in the test's host mode: `[inline]` makes it the host
the others attach to (H3), `[auto]` makes every client attach to a host started
on demand (H2). The other clients always attach (`host="auto"`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
from e2e_scripts import POSTGRES, SQLITE, ask_step, script, text_step, tool_text

from askbridge.jsonrpc import RpcResponseError
from askbridge.testing import AskbridgeClient
from askbridge.testing.wire import RawServer, is_response, updates_of
from clock_host import clock_host
from lsp_steps import new_session, start_prompt

TIMED = {"ask_mode": "timed", "ask_timeout": 600}


def first(data: Path, **kwargs: Any) -> Any:
    return AskbridgeClient.connect(data_dir=data, **kwargs)


def another(data: Path, **kwargs: Any) -> Any:
    return AskbridgeClient.connect(data_dir=data, host="auto", **kwargs)


async def test_M1_any_client_lists_and_loads_any_session(tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with first(data, model=script(text_step("hi"))) as a, another(data) as b:
        sid = await a.new_session()
        assert await a.prompt(sid, "hello") == "end_turn"
        assert sid in [s["sessionId"] for s in await b.list_sessions()]
        await b.load_session(sid)
        assert (await b.view(sid)) == {"active": [], "settled": []}
        # b follows it now: a's next turn reaches b too.
        assert await a.prompt(sid, "again") == "end_turn"
        await b.wait_for(lambda: len(b.updates(sid, "turn_ended")) == 1)


async def test_M2_an_answer_in_another_window_settles_it_and_withdraws_this_card(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    model = script(ask_step(timeout=600), text_step("done"))
    async with first(data, model=model, **TIMED) as a, another(data) as b:
        b.answer_with(lambda ask: POSTGRES)  # a leaves its card open (no answerer)
        sid = await a.new_session()
        await b.load_session(sid)
        assert await a.prompt(sid, "go") == "end_turn"
        # One card in each window; b's answer won, a's card was withdrawn ($/cancelRequest).
        assert len(a.asks) == 1 and len(b.asks) == 1
        await a.wait_for(lambda: a.withdrawn)
        assert [m for m, _ in a.withdrawn] == ["userQuestions/ask"]
        [result] = a.updates(sid, "tool_call_update")
        assert json.loads(tool_text(result)) == POSTGRES
        # Both windows hold the new view.
        settled = [{"callId": "call-1", **POSTGRES}]
        await a.wait_for(lambda: a.views.get(sid, {}).get("settled") == settled)
        await b.wait_for(lambda: b.views.get(sid, {}).get("settled") == settled)


async def test_M3_a_window_that_attaches_later_gets_the_open_card(tmp_path: Path) -> None:
    data = tmp_path / "data"
    model = script(ask_step(timeout=600), text_step("done"))
    async with first(data, model=model, **TIMED) as a:
        sid = await a.new_session()
        run = a.start_prompt(sid, "go")
        await a.wait_for(lambda: a.asks)
        async with another(data) as c:
            c.answer_with(lambda ask: SQLITE)
            await c.load_session(sid)  # subscribes while the question is open
            assert await run.result() == "end_turn"
            assert c.asks and c.asks[0]["wait"] == {"callId": "call-1", "timed": True}
        [result] = a.updates(sid, "tool_call_update")
        assert json.loads(tool_text(result)) == SQLITE


async def release(window: RawServer, claim: int) -> None:
    """C4: the window lets its claim go (`$/cancelRequest`), answered -32800."""
    await window.notify("$/cancelRequest", {"id": claim})
    assert (await window.response(claim))["error"]["code"] == -32800


async def test_M4_the_deadline_stays_held_while_any_client_claims(
    tmp_path: Path, host_mode: str
) -> None:
    """TW5 and C5 across windows, on the host's clock (clock_host.py): both windows claim,
    one releases, the deadline passes and the question stays open while the other holds;
    its release after the deadline makes the ask pending at once."""
    data = tmp_path / "data"
    model = json.dumps(script(ask_step(timeout=1), text_step("done")))
    async with clock_host(data, "--model", model, "--ask-mode", "timed") as host:
        async with host.client(host_mode) as a, RawServer.start(data, host="auto") as b:
            await a.initialize()
            await b.initialize()
            sid = await new_session(a)
            await b.call("session/load", {"sessionId": sid})
            prompt = await start_prompt(a, sid)
            claims = []
            for window in (a, b):
                await window.server_request("userQuestions/ask")
                wait = {"sessionId": sid, "callId": "call-1", "partialResultToken": "held"}
                claims.append(await window.request("userQuestions/attachWait", wait))
                await window.notification("$/progress")  # held
            await release(a, claims[0])
            await host.advance(1500)  # past the deadline: b still holds it (TW5, C5)
            view = await a.call("userQuestions/list", {"sessionId": sid})
            assert view["result"]["active"][0]["state"] == "open"
            assert not [m for m in a.backlog if is_response(m) and m["id"] == prompt]
            await release(b, claims[1])
            # The last claim left after the deadline: pending at once.
            assert (await a.response(prompt))["result"] == {"stopReason": "end_turn"}
            [result] = updates_of(a.received, "tool_call_update")
            assert json.loads(tool_text(result))["pending"] is True


async def test_M5_late_replies_from_any_client_the_first_wins(tmp_path: Path) -> None:
    data = tmp_path / "data"
    model = script(ask_step(timeout=1), text_step("pending noted"), text_step("got it"))
    async with first(data, model=model, ask_mode="timed", renders_questions=False) as a:
        async with another(data) as b, another(data) as c:
            sid = await a.new_session()
            assert await a.prompt(sid, "go") == "end_turn"  # nobody rendered it: pending
            await b.load_session(sid)
            await c.load_session(sid)
            assert await b.answer_late(sid, "call-1", SQLITE) is True
            try:
                accepted = await c.answer_late(sid, "call-1", POSTGRES)
            except RpcResponseError as exc:  # queued, not yet admitted (L2)
                assert exc.data == {"name": "UserQuestionError", "code": "REPLY_QUEUED"}
            else:
                assert accepted is False  # already admitted (L6)
            settled = [{"callId": "call-1", **SQLITE}]
            await c.wait_for(lambda: c.views.get(sid, {}).get("settled") == settled)


async def test_M6_the_last_follower_leaving_ends_the_turn_and_keeps_the_question(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    model = script(ask_step(timeout=600), text_step("never"))
    async with first(data, **TIMED) as a:
        other = await a.new_session(model=script(text_step("still here")))
        async with another(data, model=model, **TIMED) as b:
            sid = await b.new_session()
            b.start_prompt(sid, "go")
            await b.wait_for(lambda: b.asks)
        # b is gone: its turn ended cancelled, the question is continued, answerable from a.
        view = await a.view(sid)
        assert [(x["callId"], x["state"]) for x in view["active"]] == [("call-1", "continued")]
        assert await a.prompt(other, "hi") == "end_turn"  # other sessions are not affected
        assert await a.answer_late(sid, "call-1", SQLITE) is True


async def test_M7_a_client_that_stops_reading_does_not_delay_another(tmp_path: Path) -> None:
    data = tmp_path / "data"
    model = script(*[ask_step(f"call-{i}", timeout=600) for i in range(20)], text_step("done"))
    async with first(data, model=script(text_step("hi"))) as a:
        async with RawServer.start(data, host="auto") as stalled:
            await stalled.initialize()
            sid = await a.new_session(model=model, askUserQuestion={"mode": "timed"})
            # The stalled client follows the session, then never reads again.
            await stalled.request("session/load", {"sessionId": sid})
            a.answer_with(lambda ask: {"answers": [{"id": "db", "selected": ["SQLite"]}]})
            with anyio.fail_after(30):
                assert await a.prompt(sid, "go") == "end_turn"
            assert len(a.asks) == 20
            stalled.close_input()


async def test_M2_a_dismissal_in_one_window_ends_the_question_in_every_window(
    tmp_path: Path,
) -> None:
    """ASK_CANCELLED (the user's word) from one window withdraws the card from the others."""
    from e2e_scripts import ASK_CANCELLED_DATA

    data = tmp_path / "data"
    model = script(ask_step(timeout=600), text_step("after"))
    args = ("--model", json.dumps(model), "--ask-mode", "timed")
    async with RawServer.start(data, *args) as a:
        await a.initialize()  # a is up (inline: the host) before b starts
        async with RawServer.start(data, host="auto") as b:
            await b.initialize()
            sid = await new_session(a)
            await b.call("session/load", {"sessionId": sid})
            prompt = await start_prompt(a, sid)
            ask_a = await a.server_request("userQuestions/ask")
            ask_b = await b.server_request("userQuestions/ask")
            await a.respond_error(ask_a["id"], -32000, "dismissed", ASK_CANCELLED_DATA)
            cancel = await b.notification("$/cancelRequest", timeout=10)
            assert cancel["params"] == {"id": ask_b["id"]}
            assert (await a.response(prompt))["result"] == {"stopReason": "end_turn"}
            [result] = [
                m["params"]["update"]
                for m in a.received
                if m.get("method") == "session/update"
                and m["params"]["update"]["sessionUpdate"] == "tool_call_update"
            ]
            assert result["error"] == {"name": "UserQuestionError", "code": "ASK_CANCELLED"}
