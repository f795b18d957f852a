"""`askbridge sessions` over a data directory a real `askbridge serve` wrote.

The server runs a script model in timed mode: a question that goes pending
(the client ends its card with ASK_TIMED_OUT, TW7), a late reply that wakes
the agent (L4), then a second question answered at once. The listing and the
transcript are read while that server still holds the directory (read-only,
no lock) and again after it exited; missing directories, unknown sessions and
damaged ones end with one line on stderr and status 1.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from askbridge.host.store.datadir import DB_FILE_NAME
from askbridge.testing.wire import RawServer
from scripts import ask_call, script, text_step

pytestmark = pytest.mark.timeout(90)

# The script-model steps (protocol.md "ModelSpec"), spelled out: tests/e2e/e2e_scripts.py
# is not importable from tests/unit.
DB_QUESTION = {
    "id": "db",
    "question": "Which database?",
    "options": [{"label": "SQLite"}, {"label": "Postgres"}],
}
POSTGRES = {"answers": [{"id": "db", "selected": ["Postgres"]}]}


OS_QUESTION = {
    "id": "os",
    "question": "Which OS?",
    "header": "Target",
    "options": [{"label": "Linux", "description": "the usual"}, {"label": "macOS"}],
    "multi_select": True,
}
MODEL = script(
    ask_call("call-1", [DB_QUESTION], timeout=600, text="Let me ask."),
    text_step("Noted, carrying on."),
    text_step("Thanks for the late answer."),
    ask_call("call-2", [OS_QUESTION]),
    text_step("Done."),
)
TIMED_OUT = {"name": "UserQuestionError", "code": "ASK_TIMED_OUT"}


def sessions(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "askbridge.cli", "sessions", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


async def prompt(server: RawServer, sid: str, text: str) -> Any:
    return await server.request(
        "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}
    )


async def turn_ended(server: RawServer, turn_id: str) -> None:
    await server.notification(
        "session/update",
        lambda p: (
            p["update"].get("sessionUpdate") == "turn_ended" and p["update"]["turnId"] == turn_id
        ),
    )


def transcript(sid: str, created: str) -> list[str]:
    return [
        f"session {sid}  (untitled)",
        f"  created {created}  origin root  cwd /w  model script  ask_user_question timed",
        "--- turn t-1 (prompt)",
        "user: Set up the project",
        "agent: Let me ask.",
        "agent asks (call-1, timeout 600 s):",
        "  ? Which database?  [db]",
        "      - SQLite",
        "      - Postgres",
        "  -> call-1: pending (no answer before the timeout; still answerable)",
        "agent: Noted, carrying on.",
        "--- turn t-1 ended: end_turn",
        "late reply to call-1 queued: db: Postgres",
        "--- turn t-2 (inbox)",
        "user: late reply to call-1 admitted: db: Postgres",
        "agent: Thanks for the late answer.",
        "--- turn t-2 ended: end_turn",
        "--- turn t-3 (prompt)",
        "user: And the OS?",
        "agent asks (call-2):",
        "  ? [Target] Which OS?  [os] (several may be chosen)",
        "      - Linux — the usual",
        "      - macOS",
        '  -> call-2 answered: os: Linux, macOS + "and BSD"',
        "agent: Done.",
        "--- turn t-3 ended: end_turn",
    ]


async def test_sessions_lists_and_shows_a_log_while_the_server_runs_and_after(
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "data"
    model = json.dumps(MODEL)
    async with RawServer.start(data_dir, "--model", model, "--ask-mode", "timed") as server:
        await server.initialize()
        sid = (await server.call("session/new", {"cwd": "/w"}))["result"]["sessionId"]
        [info] = (await server.call("session/list", {}))["result"]["sessions"]
        created = info["createdAt"]

        first = await prompt(server, sid, "Set up the project")
        ask = await server.server_request("userQuestions/ask")
        await server.respond_error(ask["id"], -32000, "time is up", TIMED_OUT)
        assert (await server.response(first))["result"] == {"stopReason": "end_turn"}

        listed = sessions("--data-dir", str(data_dir))  # the server holds the directory
        assert (listed.returncode, listed.stderr) == (0, "")
        assert (
            listed.stdout
            == f"{sid}  {created}  (untitled)  1 turn, questions: 1 pending, 0 settled\n"
        )

        answered = await server.call(
            "userQuestions/answer", {"sessionId": sid, "callId": "call-1", "answer": POSTGRES}
        )
        assert answered["result"] is True
        await turn_ended(server, "t-2")
        second = await prompt(server, sid, "And the OS?")
        ask = await server.server_request("userQuestions/ask")
        await server.respond(
            ask["id"],
            {"answers": [{"id": "os", "selected": ["Linux", "macOS"], "custom": "and BSD"}]},
        )
        assert (await server.response(second))["result"] == {"stopReason": "end_turn"}

        shown = sessions("show", sid, "--data-dir", str(data_dir))
        assert (shown.returncode, shown.stderr) == (0, "")
        assert shown.stdout.splitlines() == transcript(sid, created)
        # The server was not disturbed: it still writes and answers.
        assert "sessionId" in (await server.call("session/new", {}))["result"]
        assert await server.shutdown_and_exit() == 0

    listed = sessions("--data-dir", str(data_dir))
    assert listed.returncode == 0, listed.stderr
    first_line, second_line = listed.stdout.splitlines()
    assert first_line == f"{sid}  {created}  (untitled)  3 turns, questions: 0 pending, 2 settled"
    assert second_line.endswith("  (untitled)  0 turns, questions: 0 pending, 0 settled")
    shown = sessions("--data-dir", str(data_dir), "show", sid)
    assert shown.stdout.splitlines() == transcript(sid, created)

    # Damage is reported, not skipped: the listing marks it and fails; show fails.
    with sqlite3.connect(data_dir / DB_FILE_NAME) as conn:
        conn.execute("DELETE FROM events WHERE session_id = ? AND seq = 3", (sid,))
    conn.close()
    damaged = f"{data_dir / DB_FILE_NAME} is damaged: session '{sid}': event 3 is missing"
    listed = sessions("--data-dir", str(data_dir))
    assert listed.returncode == 1
    assert listed.stdout.splitlines()[0] == f"{sid}  {created}  (untitled)  DAMAGED: {damaged}"
    assert len(listed.stdout.splitlines()) == 2
    shown = sessions("show", sid, "--data-dir", str(data_dir))
    assert (shown.returncode, shown.stdout, shown.stderr) == (1, "", f"askbridge: {damaged}\n")


def test_sessions_says_in_one_line_when_there_is_nothing_to_show(tmp_path: Path) -> None:
    missing = sessions("--data-dir", str(tmp_path / "nowhere"))
    assert (missing.returncode, missing.stdout) == (1, "")
    assert missing.stderr == f"askbridge: no data directory at {tmp_path / 'nowhere'}\n"
    (tmp_path / "empty").mkdir(mode=0o700)
    empty = sessions("--data-dir", str(tmp_path / "empty"))
    assert (empty.returncode, empty.stderr) == (
        1,
        f"askbridge: no askbridge database in {tmp_path / 'empty'}\n",
    )
    assert list((tmp_path / "empty").iterdir()) == []  # looked, created nothing

    serve = subprocess.run(
        [sys.executable, "-m", "askbridge.cli", "serve", "--data-dir", str(tmp_path / "d")],
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert serve.returncode == 0, serve.stderr
    nothing = sessions("--data-dir", str(tmp_path / "d"))
    assert (nothing.returncode, nothing.stdout, nothing.stderr) == (0, "", "")
    unknown = sessions("show", "s-nope", "--data-dir", str(tmp_path / "d"))
    assert (unknown.returncode, unknown.stdout, unknown.stderr) == (
        1,
        "",
        "askbridge: unknown session s-nope\n",
    )


async def test_sessions_counts_an_answered_blocking_question_and_shows_no_timeout(
    tmp_path: Path,
) -> None:
    """Issue 18 item 7: a legacy (blocking) question answered in its turn is settled, and
    `timeout -1` reads as "no timeout"; `sessions list` is the listing; --help says what."""
    data_dir = tmp_path / "data"
    model = script(ask_call("call-1", [DB_QUESTION], timeout=-1), text_step("ok"))
    async with RawServer.start(data_dir, "--model", json.dumps(model), "--ask-mode", "legacy") as s:
        await s.initialize()
        sid = (await s.call("session/new", {"cwd": "/w"}))["result"]["sessionId"]
        first = await prompt(s, sid, "go")
        ask = await s.server_request("userQuestions/ask")
        await s.respond(ask["id"], POSTGRES)
        assert (await s.response(first))["result"] == {"stopReason": "end_turn"}
        assert await s.shutdown_and_exit() == 0
    listed = sessions("list", "--data-dir", str(data_dir))
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.endswith("  (untitled)  1 turn, questions: 0 pending, 1 settled\n")
    shown = sessions("show", sid, "--data-dir", str(data_dir))
    assert "agent asks (call-1, no timeout):" in shown.stdout.splitlines()
    wrong = sessions("lst", "--data-dir", str(data_dir))
    assert wrong.returncode == 2 and "sessions_action" not in wrong.stderr
    assert "choose from 'list', 'show'" in wrong.stderr
    helped = sessions("--help")
    assert "pending (asked, not answered yet)" in " ".join(helped.stdout.split())
