"""Codex CLI (`codex exec`, the pinned npm release) with askbridge as its MCP server (X2–X4).

The model is tests/agents/fake_model.py behind a custom model provider (`base_url`, Responses
API) in a CODEX_HOME under tmp_path; the editor is the harness client on `askbridge serve`
with the same data directory. Codex puts an MCP server's tools in one namespace,
`mcp__askbridge`, which the scripted calls name. Real seconds (a separate binary).
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import anyio
from fake_model import FakeModel, fake_model

from agents import codex, editor_on, run_agent

NS = "mcp__askbridge"
QUESTION = {
    "id": "db",
    "header": "DB",
    "question": "Which database?",
    "options": [{"label": "Postgres"}, {"label": "SQLite"}],
}


def call(tool: str, args: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"tool": tool, "namespace": NS, "input": args, **more}


def outputs(model: FakeModel) -> list[str]:
    """The text of every function_call_output Codex sent back, in order, once each."""
    seen: dict[str, str] = {}
    for body in model.turns():
        for item in body["input"]:
            if item.get("type") != "function_call_output":
                continue
            out = item["output"]
            text = out if isinstance(out, str) else "\n".join(p.get("text", "") for p in out)
            seen.setdefault(item["call_id"], text)
    return list(seen.values())


def tool_json(text: str) -> Any:
    """The first JSON value in a Codex tool output (it prefixes 'Wall time: …\\nOutput:')."""
    start = text.index("{")
    value, _ = json.JSONDecoder().raw_decode(text[start:])
    return value


async def run_codex(model: FakeModel, tmp_path: Path, **options: Any) -> None:
    await run_agent(codex, model.url, tmp_path, **options)


async def test_X3_M2_an_answer_in_the_editor_reaches_the_models_next_request(
    tmp_path: Path,
) -> None:
    async with editor_on(tmp_path / "data") as editor:
        editor.answer_script({"answers": [{"id": "db", "selected": ["Postgres"]}]})
        steps = [
            call("ask_user_question", {"questions": [QUESTION], "timeout": 60}),
            {"text": "ok"},
        ]
        with fake_model(steps) as model:
            await run_codex(model, tmp_path)
        assert [a["questions"] for a in editor.asks] == [[QUESTION]]
    [out] = outputs(model)
    assert tool_json(out) == {"answers": [{"id": "db", "selected": ["Postgres"]}]}


async def _late_answer_after_withdrawal(editor: Any, answered: threading.Event) -> None:
    """Nobody answers the card; once the server withdraws it, answer late (L4)."""
    try:
        await editor.wait_for(lambda: editor.withdrawn, timeout=90)
        ask = editor.asks[0]
        answer = {"answers": [{"id": "db", "selected": ["SQLite"]}]}
        late = await editor.answer_late(ask["sessionId"], ask["wait"]["callId"], answer)
        assert late, "the editor's late answer was refused: the question did not stay open"
    finally:
        answered.set()  # the model goes on either way; the assertions say what it saw


async def ask_then_get_answers(
    tmp_path: Path, timeout: int, **options: Any
) -> tuple[list[str], float]:
    """Codex asks QUESTION with `timeout`; the editor answers it late (after the card is
    withdrawn); then Codex calls get_answers. What Codex got back from the two calls, and
    how long it ran (seconds)."""
    answered = threading.Event()
    steps = [
        call("ask_user_question", {"questions": [QUESTION], "timeout": timeout}),
        call("get_answers", {}, after=answered),
        {"text": "ok"},
    ]
    async with editor_on(tmp_path / "data") as editor, anyio.create_task_group() as tg:
        with fake_model(steps) as model:
            tg.start_soon(_late_answer_after_withdrawal, editor, answered)
            started = time.monotonic()
            await run_codex(model, tmp_path, **options)
            elapsed = time.monotonic() - started
    return outputs(model), elapsed


async def test_X2_X4_an_unanswered_timed_question_is_pending_and_get_answers_gets_its_late_answer(
    tmp_path: Path,
) -> None:
    pending, got = map(tool_json, (await ask_then_get_answers(tmp_path, 2))[0])
    assert pending["pending"] is True and "get_answers" in pending["message"]
    assert got["answers"][0]["callId"] == pending["callId"]
    assert got["answers"][0]["answers"] == [{"id": "db", "selected": ["SQLite"]}]


async def test_X3_codex_applies_tool_timeout_sec_and_the_question_stays_answerable(
    tmp_path: Path,
) -> None:
    """`tool_timeout_sec` (the README's line) is the limit Codex puts on one tools/call: at 3 s
    it gives up on a 60 s question. Its cancel must leave the question continued (X3), so the
    late answer still reaches get_answers."""
    (timed_out, got), elapsed = await ask_then_get_answers(tmp_path, 60, tool_timeout_sec=3)
    assert elapsed < 50  # not the question's own 60 s
    assert "timed out" in timed_out.lower() and "3" in timed_out, timed_out
    answers = tool_json(got)
    assert answers["answers"][0]["answers"] == [{"id": "db", "selected": ["SQLite"]}]


async def test_X2_codex_gives_a_tool_more_than_60_s_by_default(tmp_path: Path) -> None:
    """No `tool_timeout_sec`: Codex 0.171 does not stop a 65 s question at 60 s (the old
    README claim); it runs to its own deadline and the model gets askbridge's pending."""
    steps = [call("ask_user_question", {"questions": [QUESTION], "timeout": 65}), {"text": "ok"}]
    async with editor_on(tmp_path / "data") as editor:
        with fake_model(steps) as model:
            await run_codex(model, tmp_path)
        assert len(editor.asks) == 1
    [out] = outputs(model)
    assert "timed out" not in out.lower(), out
    assert tool_json(out)["pending"] is True


async def test_F3_codex_exec_with_no_editor_declines_the_form_unseen(tmp_path: Path) -> None:
    """`codex exec` (approval_policy "never") declares form elicitation and answers every form
    `decline` at once, unseen (not `cancel`, as `claude -p` does). By F3 a decline is the
    tool error ASK_DECLINED, so that is what the model reads, never a cancel. Nobody was
    asked, though: whether a headless decline should rather be pending is a spec question,
    and this test changes with the spec."""
    steps = [call("ask_user_question", {"questions": [QUESTION], "timeout": 5}), {"text": "ok"}]
    with fake_model(steps) as model:
        await run_codex(model, tmp_path)
    [out] = outputs(model)
    # Codex hands the model a result's structuredContent, not its text (T3's {name, code,
    # message} for a failure).
    assert tool_json(out)["code"] == "ASK_DECLINED", out
