"""Gemini CLI (`gemini -p`, the pinned npm release) with askbridge as its MCP server (X2–X4).

The model is tests/agents/fake_model.py at GOOGLE_GEMINI_BASE_URL (Gemini CLI's base URL
variable for the API-key auth type, read by its @google/genai client); the editor is the
harness client on `askbridge serve` with the same data directory. Gemini CLI names an MCP
tool `mcp_<server>_<tool>`. Real seconds (a separate binary).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import anyio
from fake_model import FakeModel, fake_model

from agents import editor_on, gemini, run_agent

ASK, GET = "mcp_askbridge_ask_user_question", "mcp_askbridge_get_answers"
QUESTION = {
    "id": "db",
    "header": "DB",
    "question": "Which database?",
    "options": [{"label": "Postgres"}, {"label": "SQLite"}],
}


def outputs(model: FakeModel) -> list[Any]:
    """Every functionResponse Gemini CLI sent back, in order, once each."""
    seen: dict[str, Any] = {}
    for body in model.turns():
        for content in body["contents"]:
            for part in content.get("parts", []):
                if "functionResponse" in part:
                    seen.setdefault(part["functionResponse"]["id"], part["functionResponse"])
    return list(seen.values())


def tool_json(response: dict[str, Any]) -> Any:
    """The JSON askbridge returned (Gemini CLI wraps it in <untrusted_context> tags)."""
    text = response["response"]["output"]
    start = text.index("{")
    value, _ = json.JSONDecoder().raw_decode(text[start:])
    return value


def tool_names(model: FakeModel) -> list[str]:
    first = model.turns()[0]
    return [d["name"] for t in first["tools"] for d in t.get("functionDeclarations", [])]


async def run_gemini(model: FakeModel, tmp_path: Path, **options: Any) -> None:
    await run_agent(gemini, model.url, tmp_path, **options)


async def test_X3_M2_an_answer_in_the_editor_reaches_the_models_next_request(
    tmp_path: Path,
) -> None:
    async with editor_on(tmp_path / "data") as editor:
        editor.answer_script({"answers": [{"id": "db", "selected": ["Postgres"]}]})
        steps = [{"tool": ASK, "input": {"questions": [QUESTION], "timeout": 60}}, {"text": "ok"}]
        with fake_model(steps) as model:
            await run_gemini(model, tmp_path)
        assert [a["questions"] for a in editor.asks] == [[QUESTION]]
    [out] = outputs(model)
    assert tool_json(out) == {"answers": [{"id": "db", "selected": ["Postgres"]}]}


async def test_X2_X4_an_unanswered_timed_question_is_pending_and_get_answers_gets_its_late_answer(
    tmp_path: Path,
) -> None:
    answered = threading.Event()
    steps = [
        {"tool": ASK, "input": {"questions": [QUESTION], "timeout": 2}},
        {"tool": GET, "input": {}, "after": answered},
        {"text": "ok"},
    ]

    async def late(editor: Any) -> None:
        try:
            await editor.wait_for(lambda: editor.withdrawn, timeout=60)
            ask = editor.asks[0]
            answer = {"answers": [{"id": "db", "selected": ["SQLite"]}]}
            assert await editor.answer_late(ask["sessionId"], ask["wait"]["callId"], answer)
        finally:
            answered.set()

    async with editor_on(tmp_path / "data") as editor, anyio.create_task_group() as tg:
        with fake_model(steps) as model:
            tg.start_soon(late, editor)
            await run_gemini(model, tmp_path)
    pending, got = map(tool_json, outputs(model))
    assert pending["pending"] is True and "get_answers" in pending["message"]
    assert got["answers"][0]["callId"] == pending["callId"]
    assert got["answers"][0]["answers"] == [{"id": "db", "selected": ["SQLite"]}]


async def test_gemini_cli_runs_askbridge_only_in_a_trusted_folder(tmp_path: Path) -> None:
    """The README's line: `gemini -p` in a folder the user has not trusted stops at once
    (status 55) and never reaches the model or askbridge; trusted, the tools are offered."""
    (tmp_path / "work").mkdir()
    with fake_model([{"text": "ok"}]) as model:
        untrusted = await anyio.to_thread.run_sync(
            lambda: gemini(
                "Go ahead.",
                model_url=model.url,
                data_dir=tmp_path / "data",
                home=tmp_path / "home",
                cwd=tmp_path / "work",
                trusted=False,
            )
        )
    assert untrusted.returncode == 55, untrusted
    assert "not running in a trusted directory" in untrusted.stderr
    assert model.requests == []
    with fake_model([{"text": "ok"}]) as model:
        await run_gemini(model, tmp_path, trusted=True)
    assert {ASK, GET} <= set(tool_names(model))


async def test_X3_gemini_p_with_no_editor_gets_pending(tmp_path: Path) -> None:
    """No editor attached: the timed question runs out and the model gets pending (X2, X3)."""
    steps = [{"tool": ASK, "input": {"questions": [QUESTION], "timeout": 2}}, {"text": "ok"}]
    with fake_model(steps) as model:
        await run_gemini(model, tmp_path)
    [out] = outputs(model)
    assert tool_json(out)["pending"] is True
