"""D1/D2 over the wire: what the server acknowledged survives `kill -9` of the server.

The late reply is committed (its inbox event) before `userQuestions/answer` returns
true (D1). The server is SIGKILLed right after that acknowledgement, so whatever
it was doing next (admitting the reply, running the turn) is cut off at a random
point; a server restarted on the same data directory must still hold the reply:
queued (REPLY_QUEUED, then admitted on load, L5) or already admitted (settled).
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from e2e_scripts import POSTGRES, ask_step, of_type, script, stored_events, text_step

from askbridge.core import UserQuestionError
from askbridge.jsonrpc import RpcResponseError
from askbridge.protocol import ErrorCode

pytestmark = pytest.mark.timeout(60)


OS_QUESTION = {"id": "os", "question": "Which OS?", "options": [{"label": "Linux"}]}


@pytest.mark.parametrize("agent", ["idle", "busy"])
async def test_an_acknowledged_late_reply_survives_sigkill(
    askbridge_client: Any, tmp_path: Any, agent: str
) -> None:
    """D1/D2/L2/L5: answer → true, SIGKILL at once; after a restart the reply is in the log
    exactly once and ends up admitted: the view settles with that batch. `idle`: the reply
    wakes the agent, so the kill lands anywhere in its turn; `busy`: the agent is inside a
    second question, so the reply is certainly still queued at the kill."""
    steps = [ask_step(), text_step("pending"), text_step("got the late reply")]
    if agent == "busy":
        steps.insert(1, ask_step("call-2", [OS_QUESTION], timeout=-1))
    async with askbridge_client(model=script(*steps), ask_mode="timed", ask_timeout=600) as client:

        async def answer(ask: dict[str, Any]) -> Any:
            if ask["wait"]["callId"] == "call-1":
                raise UserQuestionError.of(ErrorCode.ASK_TIMED_OUT)
            await anyio.sleep_forever()  # call-2's card stays open

        client.answer_with(answer)
        sid = await client.new_session()
        run = client.start_prompt(sid, "go")
        if agent == "busy":
            await client.wait_for(lambda: len(client.asks) == 2)
        else:
            assert await run.result() == "end_turn"
        assert await client.answer_late(sid, "call-1", POSTGRES) is True
        assert await client.kill() == -9

    data = tmp_path / "askbridge-data"
    events = await stored_events(data, sid)
    [inserted] = of_type(events, "agent/inbox/inserted")
    reply = json.loads(inserted["message"]["content"][0]["text"])
    assert (reply["callId"], reply["answers"]) == ("call-1", POSTGRES["answers"])

    async with askbridge_client() as client:
        # Lazily loaded by `answer`: the reply is still queued (L2 survives the restart) or,
        # if the killed server had admitted it already, settled (L6).
        try:
            accepted = await client.answer_late(sid, "call-1", POSTGRES)
        except RpcResponseError as exc:
            assert exc.data == {"name": "UserQuestionError", "code": "REPLY_QUEUED"}
        else:
            assert agent == "idle" and accepted is False
        settled = [{"callId": "call-1", **POSTGRES}]
        # Admitted before the kill (the list says so at once), or now, at load (L5): then
        # a `settled` change follows the new subscriber's snapshot.
        if (await client.view(sid))["settled"] != settled:
            await client.wait_for(lambda: client.views[sid]["settled"] == settled)
        view = await client.view(sid)
        assert view["settled"] == settled
        if agent == "busy":  # call-2 was cut off by the crash: repaired, answerable (P7)
            assert [(a["callId"], a["state"]) for a in view["active"]] == [("call-2", "continued")]
    events = await stored_events(data, sid)
    assert len(of_type(events, "agent/inbox/inserted")) == 1
    [admitted] = [e for e in of_type(events, "user/message") if e.get("source")]
    assert admitted["source"] == {
        "kind": "user-question-reply",
        "callId": "call-1",
        "outcome": "answered",
    }
