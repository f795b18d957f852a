"""protocol.md "Clients without the capability (generic LSP clients)".

The client here does not declare `experimental.userQuestions`, so the server
asks with `window/showMessageRequest`, declines batches buttons cannot show,
shows a timed wait as work-done progress when the client declared
`window.workDoneProgress`, and withdraws requests it no longer wants.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from e2e_scripts import DB_QUESTION, ask_step, script, text_step, tool_json, tool_text

from askbridge.jsonrpc import RpcError
from askbridge.lsp.relay import message_text
from askbridge.protocol.vocabulary import QuestionItem

pytestmark = pytest.mark.timeout(60)

OS_QUESTION = {
    "id": "os",
    "header": "Target",
    "question": "Which OS?",
    "options": [{"label": "Linux", "description": "the usual"}, {"label": "BSD"}],
}
MULTI = {
    "id": "tags",
    "question": "Tags?",
    "options": [{"label": "a"}, {"label": "b"}],
    "multi_select": True,
}
FREE = {"id": "name", "question": "Name?"}


def shown(client: Any) -> list[dict[str, Any]]:
    return [p for m, p in client.notifications if m == "window/showMessageRequest"]


def progress(client: Any) -> list[dict[str, Any]]:
    return [p for m, p in client.notifications if m == "$/progress"]


async def test_each_question_is_asked_in_turn_with_show_message_request(
    askbridge_client: Any,
) -> None:
    """Fallback: one window/showMessageRequest per question, in order: type 3, message
    `[header] question` (or the bare question), actions = option labels; the chosen titles
    make the answer."""
    choices = iter([{"title": "Postgres"}, {"title": "BSD"}])
    model = script(ask_step(questions=[DB_QUESTION, OS_QUESTION]), text_step("done"))
    async with askbridge_client(model=model, renders_questions=False) as client:
        client.answer_with(lambda params: next(choices))
        sid = await client.new_session()
        assert await client.prompt(sid, "go") == "end_turn"
        assert shown(client) == [
            {
                "type": 3,
                "message": "Which database?",
                "actions": [{"title": "SQLite"}, {"title": "Postgres"}],
            },
            {
                "type": 3,
                "message": "[Target] Which OS?",
                "actions": [{"title": "Linux"}, {"title": "BSD"}],
            },
        ]
        [update] = client.updates(sid, "tool_call_update")
        assert tool_json(update) == {
            "answers": [{"id": "db", "selected": ["Postgres"]}, {"id": "os", "selected": ["BSD"]}]
        }
        assert client.asks == []  # never sent userQuestions/ask to this client


def test_message_text_puts_the_detail_after_a_blank_line() -> None:
    """Fallback message format with `detail` (only programmatic callers give detail, T2, so
    the wire cannot carry it from a script model): `[header] question\\n\\ndetail`."""
    q = QuestionItem(id="p", question="Apply the plan?", header="Plan", detail="1. a\n2. b")
    assert message_text(q) == "[Plan] Apply the plan?\n\n1. a\n2. b"
    assert message_text(QuestionItem(id="p", question="Apply?", detail="d")) == "Apply?\n\nd"


async def test_null_cancels_error_is_provider_error_and_cancel_withdraws(
    askbridge_client: Any,
) -> None:
    """Fallback: a null reply is ASK_CANCELLED (the next question is not shown); an error reply
    is PROVIDER_ERROR with the client's message; session/cancel withdraws the outstanding
    showMessageRequest with $/cancelRequest and the ask ends ASK_ABORTED."""
    model = script(
        ask_step("c-null", [DB_QUESTION, OS_QUESTION]),
        ask_step("c-error"),
        ask_step("c-cancel"),
        text_step("unused"),
    )

    async def reply(params: dict[str, Any]) -> Any:
        count = len(shown(client))
        if count == 1:
            return None
        if count == 2:
            raise RpcError(-32001, "no buttons today")
        await anyio.sleep_forever()

    async with askbridge_client(model=model, renders_questions=False) as client:
        client.answer_with(reply)
        sid = await client.new_session()
        run = client.start_prompt(sid, "go")
        await client.wait_for(lambda: len(shown(client)) == 3)
        client.cancel(sid)
        assert await run.result() == "cancelled"
        await client.wait_for(lambda: client.withdrawn)
        assert client.withdrawn == [("window/showMessageRequest", shown(client)[2])]
        cancelled, failed, aborted = client.updates(sid, "tool_call_update")
        assert cancelled["error"] == {"name": "UserQuestionError", "code": "ASK_CANCELLED"}
        assert failed["error"] == {"name": "UserQuestionError", "code": "PROVIDER_ERROR"}
        assert tool_text(failed) == "Error: no buttons today"
        assert aborted["error"] == {"name": "UserQuestionError", "code": "ASK_ABORTED"}


@pytest.mark.parametrize(
    "batch", [[MULTI], [DB_QUESTION, FREE]], ids=["multi-select", "no-options"]
)
async def test_unrepresentable_blocking_batch_is_no_provider(
    askbridge_client: Any, batch: list[dict[str, Any]]
) -> None:
    """Fallback: a batch with a multi-select question or one without options is declined
    before anything is shown; a blocking ask then fails with NO_PROVIDER (W1)."""
    async with askbridge_client(
        model=script(ask_step(questions=batch)), renders_questions=False
    ) as client:
        sid = await client.new_session()
        assert await client.prompt(sid, "go") == "end_turn"
        [update] = client.updates(sid, "tool_call_update")
        assert update["error"] == {"name": "UserQuestionError", "code": "NO_PROVIDER"}
        assert tool_text(update) == "Error: no user-questions answerer accepted the request"
        assert shown(client) == []


async def test_timed_wait_shows_work_done_progress_until_answered(askbridge_client: Any) -> None:
    """Fallback + window.workDoneProgress: while the showMessageRequest is outstanding the
    server creates progress and sends begin, a report per second counting down, and end when
    the wait ends (here: answered after the first report)."""
    reported = anyio.Event()

    async def answer_after_a_report(params: dict[str, Any]) -> dict[str, str]:
        await reported.wait()
        return {"title": "SQLite"}

    model = script(ask_step(), text_step("done"))
    async with askbridge_client(
        model=model,
        renders_questions=False,
        work_done_progress=True,
        ask_mode="timed",
        ask_timeout=600,
    ) as client:
        client.answer_with(answer_after_a_report)
        sid = await client.new_session()
        run = client.start_prompt(sid, "go")
        await client.wait_for(lambda: any(p["value"]["kind"] == "report" for p in progress(client)))
        reported.set()
        assert await run.result() == "end_turn"
        await client.wait_for(lambda: progress(client)[-1]["value"]["kind"] == "end")
        [create] = [p for m, p in client.notifications if m == "window/workDoneProgress/create"]
        frames = progress(client)
        assert {f["token"] for f in frames} == {create["token"]}
        kinds = [f["value"]["kind"] for f in frames]
        assert kinds[0] == "begin" and kinds[-1] == "end" and set(kinds[1:-1]) == {"report"}
        begin = frames[0]["value"]
        assert begin["title"] and begin["message"].endswith("s left to answer")
        seconds = [int(f["value"]["message"].split()[0]) for f in frames[:-1]]
        assert seconds == sorted(seconds, reverse=True) and 590 <= seconds[-1] <= seconds[0] <= 600
        assert tool_json(client.updates(sid, "tool_call_update")[0]) == {
            "answers": [{"id": "db", "selected": ["SQLite"]}]
        }


async def test_timed_deadline_withdraws_the_request_and_declined_batches_wait(
    askbridge_client: Any,
) -> None:
    """Fallback with the real clock (1 s; two sessions share the second): at the unclaimed
    deadline the outstanding showMessageRequest is withdrawn ($/cancelRequest), its progress
    ends and the tool returns pending (TW6); a declined (multi-select) timed batch shows
    nothing and returns pending at the deadline too (TW8)."""
    model = script(ask_step(), text_step("moving on"))
    async with askbridge_client(
        model=model,
        renders_questions=False,
        work_done_progress=True,
        ask_mode="timed",
        ask_timeout=1,
    ) as client:
        shown_sid = await client.new_session()
        declined_sid = await client.new_session(
            model=script(ask_step(questions=[MULTI]), text_step("moving on"))
        )
        runs = [client.start_prompt(shown_sid, "go"), client.start_prompt(declined_sid, "go")]
        assert [await run.result() for run in runs] == ["end_turn", "end_turn"]
        await client.wait_for(lambda: client.withdrawn)
        [request] = shown(client)
        assert request["message"] == "Which database?"
        assert client.withdrawn == [("window/showMessageRequest", request)]
        await client.wait_for(
            lambda: progress(client) and progress(client)[-1]["value"]["kind"] == "end"
        )
        assert (
            len([p for m, p in client.notifications if m == "window/workDoneProgress/create"]) == 1
        )
        for sid in (shown_sid, declined_sid):
            [update] = client.updates(sid, "tool_call_update")
            assert tool_json(update)["pending"] is True
            assert (await client.view(sid))["active"][0]["state"] == "continued"
