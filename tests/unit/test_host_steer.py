"""Steering and inbox delivery (issue: "an inbox with next-turn and next-step delivery").

`steer` puts a user message in the agent's inbox with next-step delivery: a
running agent reads it at its next step boundary, an idle one wakes for it.
Next-turn items wait for the start of a turn. Both are durable inbox events.
"""

from __future__ import annotations

from host_helpers import answer, ask_step, host_env, of_type, script, settle, text_step, types

from askbridge.host.log import events as ev
from askbridge.host.store.store_memory import MemoryEventStore


async def test_steer_reaches_a_running_agent_at_its_next_step_boundary() -> None:
    async with host_env(mode="legacy") as env:
        s = await env.host.new_session(model=script(ask_step("call-1"), text_step("done")))
        run = env.prompt(s.id, "start")
        await settle()
        assert len(env.desk.requests) == 1  # the ask is open
        await env.host.steer(s.id, "use Postgres, not SQLite")
        await settle()
        log = await env.log(s.id)
        # Durable at once, not admitted while the step's tool call still runs.
        assert types(log)[-1] == ev.INBOX_INSERTED
        assert log[-1]["delivery"] == "next-step"
        env.desk.reply("*", answer(db="x"))
        await settle()
        assert run.stop == "end_turn"
        log = await env.log(s.id)
        kinds = types(log)
        # Admitted after the tool result (the step boundary), before the next model request.
        steer_at = next(
            i
            for i, e in enumerate(log)
            if e["type"] == ev.USER_MESSAGE and e["content"][0]["text"].startswith("use Postgres")
        )
        assert kinds[steer_at - 1] == ev.TOOL_RESULT
        assert kinds[steer_at + 1] == ev.INBOX_CLAIMED
        assert kinds[steer_at + 2] == ev.REQUEST_HEADER
        assert len(of_type(log, ev.TURN_START)) == 1  # same turn


async def test_steer_wakes_an_idle_agent_into_an_inbox_turn() -> None:
    async with host_env(mode="legacy") as env:
        s = await env.host.new_session(model=script(text_step("first"), text_step("steered")))
        run = env.prompt(s.id, "hello")
        await settle()
        assert run.stop == "end_turn"
        await env.host.steer(s.id, "one more thing")
        await settle()
        starts = env.rec.of("turn_started", s.id)
        assert [u["cause"] for u in starts] == ["prompt", "inbox"]
        log = await env.log(s.id)
        assert log[-1]["type"] == ev.TURN_END
        assert "one more thing" in [e["content"][0]["text"] for e in of_type(log, ev.USER_MESSAGE)]


async def test_next_turn_items_wait_for_a_turn_start_not_a_step_boundary() -> None:
    store = MemoryEventStore()
    async with host_env(store, mode="legacy") as env:
        s = await env.host.new_session(model=script(ask_step("call-1"), text_step("done")))
        run = env.prompt(s.id, "start")
        await settle()
        session = await env.host.get_session(s.id)
        await session.enqueue_inbox(ev.text_content("for the next turn"), None, "next-turn")
        env.desk.reply("*", answer(db="x"))
        await settle()
        assert run.stop == "end_turn"
        log = await env.log(s.id)
        [first_end] = [i for i, e in enumerate(log) if e["type"] == ev.TURN_END][:1]
        admitted = [
            i
            for i, e in enumerate(log)
            if e["type"] == ev.USER_MESSAGE and e["content"][0]["text"] == "for the next turn"
        ]
        # Not admitted inside the first turn; the idle agent then woke a turn for it.
        assert admitted and admitted[0] > first_end
        assert [u["cause"] for u in env.rec.of("turn_started", s.id)] == ["prompt", "inbox"]
