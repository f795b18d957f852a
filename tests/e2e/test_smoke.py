"""The README's example, end to end against the real process."""

from askbridge.core import UserQuestionError
from askbridge.protocol import ErrorCode

ASK = {
    "toolCalls": [
        {
            "id": "call-1",
            "name": "ask_user_question",
            "arguments": {
                "questions": [
                    {
                        "id": "db",
                        "question": "Which database?",
                        "options": [{"label": "SQLite"}, {"label": "Postgres"}],
                    }
                ]
            },
        }
    ]
}
SCRIPT = {"kind": "script", "steps": [ASK, {"text": "done"}]}


async def test_blocking_ask_answered_by_the_client(askbridge_client):
    async with askbridge_client(model=SCRIPT) as client:
        client.answer_with(lambda ask: {"answers": [{"id": "db", "selected": ["SQLite"]}]})
        sid = await client.new_session()
        assert await client.prompt(sid, "pick a database") == "end_turn"
        [result] = client.updates(sid, "tool_call_update")
        assert (
            result["content"][0]["content"]["text"]
            == '{"answers":[{"id":"db","selected":["SQLite"]}]}'
        )


async def test_cancelled_card_becomes_the_tool_error(askbridge_client):
    async with askbridge_client(model=SCRIPT) as client:
        client.answer_script(UserQuestionError.of(ErrorCode.ASK_CANCELLED))
        sid = await client.new_session()
        assert await client.prompt(sid, "pick") == "end_turn"
        [result] = client.updates(sid, "tool_call_update")
        assert result["status"] == "failed"
        assert result["error"] == {"name": "UserQuestionError", "code": "ASK_CANCELLED"}


async def test_timed_ask_claimed_then_pending_then_late_reply(askbridge_client):
    async with askbridge_client(model=SCRIPT, ask_mode="timed", ask_timeout=1) as client:
        sid = await client.new_session()
        async with __import__("anyio").create_task_group() as tg:
            tg.start_soon(client.prompt, sid, "pick")
            await client.wait_for(lambda: client.asks)
            claim = await client.claim(sid, "call-1")
            assert claim.held and 0 < claim.remaining_ms <= 1000
            claim.release()
        [result] = client.updates(sid, "tool_call_update")
        assert '"pending":true' in result["content"][0]["content"]["text"]
        assert await client.answer_late(
            sid, "call-1", {"answers": [{"id": "db", "selected": ["Postgres"]}]}
        )
        await client.wait_for(lambda: len(client.updates(sid, "turn_ended")) == 2)
        assert client.updates(sid, "turn_started")[1]["cause"] == "inbox"
