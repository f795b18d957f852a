"""A slow client never blocks the agent loop of another session (issue: robust edge).

The client leaves one session's question open (the user is thinking); a second
session of the same server asks, gets its answer and finishes its turn, and the
first card is still open and answerable afterwards.
"""

from __future__ import annotations

from typing import Any

import anyio

from askbridge.testing import AskbridgeClient

ASK = {
    "toolCalls": [
        {
            "id": "call-1",
            "name": "ask_user_question",
            "arguments": {
                "questions": [
                    {"id": "db", "question": "Which?", "options": [{"label": "a"}, {"label": "b"}]}
                ]
            },
        }
    ]
}
SCRIPT = {"kind": "script", "steps": [ASK, {"text": "done"}]}


async def test_an_open_card_in_one_session_does_not_hold_another(tmp_path: Any) -> None:
    release_slow = anyio.Event()

    async with AskbridgeClient.connect(data_dir=tmp_path / "data", model=SCRIPT) as client:
        slow = await client.new_session()
        fast = await client.new_session()

        async def answer(params: dict[str, Any]) -> dict[str, Any]:
            if params["sessionId"] == slow:
                await release_slow.wait()  # this user takes their time
            return {"answers": [{"id": "db", "selected": ["a"]}]}

        client.answer_with(answer)
        slow_run = client.start_prompt(slow, "go")
        await client.wait_for(lambda: any(a["sessionId"] == slow for a in client.asks))
        with anyio.fail_after(10):
            assert await client.prompt(fast, "go") == "end_turn"
        assert not client.updates(slow, "turn_ended")  # still waiting on its user
        release_slow.set()
        with anyio.fail_after(10):
            assert await slow_run.result() == "end_turn"
