"""The group commit on a question's path (host/store/commits.py, agent/turns.py; D1).

A question costs one commit: when a window answers, the turn is woken before the
answer's tool result is logged, so a model that replies at once (a script) logs its
next step into the same transaction as that result. D1 still holds: the next card
is shown only after that commit, and the result's update is published after it too.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from host_helpers import ask_step, host_env, q, script, settle, text_step
from test_host_records import CallbackWindow

from askbridge.host.log import events as ev
from askbridge.host.store.store_memory import MemoryEventStore


class CommitLog(MemoryEventStore):
    """The memory store, keeping the event types of each transaction (each append_encoded)."""

    def __init__(self) -> None:
        super().__init__()
        self.commits: list[list[str]] = []

    def append_encoded(self, batches: Sequence[tuple[str, Sequence[str]]]) -> None:
        super().append_encoded(batches)
        self.commits.append([json.loads(text)["type"] for _, texts in batches for text in texts])


async def test_D1_an_answer_and_the_next_step_share_one_commit() -> None:
    store = CommitLog()
    async with host_env(store, mode="timed", timeout_s=60) as env:
        window = CallbackWindow()
        client = env.host.attach(window, {})  # type: ignore[arg-type]
        steps = [ask_step("call-1", [q("db")]), ask_step("call-2", [q("db")]), text_step("ok")]
        s = env.host.new_session(client, model=script(*steps))
        run = env.prompt(s.id, "go")
        await settle()
        assert list(window.cards) == ["call-1"]
        store.commits.clear()
        window.answer("call-1", "x")
        assert "call-2" not in window.cards  # D1: not before the step is durable
        await settle()
        step = [ev.REQUEST_HEADER, ev.ASSISTANT_MESSAGE, ev.TOOL_CALL]
        assert store.commits == [[ev.TOOL_RESULT, *step]]
        assert list(window.cards) == ["call-2"]
        completed = [u for u in env.rec.of("tool_call_update", s.id) if u["status"] == "completed"]
        assert [u["toolCallId"] for u in completed] == ["call-1"]
        window.answer("call-2", "y")
        await settle()
        assert run.stop == "end_turn"
