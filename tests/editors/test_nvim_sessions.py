"""Stored sessions from Neovim: :AskbridgeSessions (one server).

Two Neovim processes, one after the other, on the same data directory with a
real `askbridge serve` each: the first leaves a timed question pending and
creates a second session; the second lists the stored sessions
(`session/list`) in a picker, loads the chosen one (`session/load`) — whose
first didChange carries its continued question (S2) — and answers it late with
:AskbridgeAnswer (L4), which wakes the agent in an inbox turn.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from test_nvim import DB_QUESTION, TIMED_ASK_S, VIM_LOG_ERROR, ask, run_nvim, server_command

from stored_logs import read_log


def test_M1_L4_sessions_lists_loads_and_answers_a_continued_question(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    steps = [ask("call-1", [DB_QUESTION]), {"text": "waiting"}, {"text": "thanks"}]
    cmd = server_command(steps, "timed", TIMED_ASK_S)
    (tmp_path / "first").mkdir()
    first = run_nvim(tmp_path / "first", "scenario_sessions_first.lua", cmd, data_dir)
    assert first["server_exit_code"] == 0
    pending_session, empty_session = first["sessions"]

    (tmp_path / "second").mkdir()
    second = run_nvim(
        tmp_path / "second",
        "scenario_sessions_load.lua",
        cmd,
        data_dir,
        extra_env={"ASKBRIDGE_TEST_SESSION": pending_session},
    )

    assert [n for n in second["notes"] if n["level"] == VIM_LOG_ERROR] == []
    assert second["pending_before"] == 0  # a new Neovim knows nothing before loading
    (listing,) = [p for p in second["prompts"] if p["kind"] == "askbridge.session"]
    assert listing["prompt"] == "Load which askbridge session?"
    # Newest first: id, creation time (UTC), title.
    assert [line.split()[0] for line in listing["items"]] == [empty_session, pending_session]
    line = r"s-[0-9a-f]+  \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ  \(untitled\)"
    assert all(re.fullmatch(line, item) for item in listing["items"]), listing["items"]
    assert second["notes"][0]["msg"] == (
        f"askbridge: loaded session {pending_session}: 1 continued question,"
        " :AskbridgeAnswer to reply"
    )
    assert second["current"] == pending_session
    (entry,) = second["pending_loaded"]
    assert (entry["session_id"], entry["call_id"]) == (pending_session, "call-1")
    assert entry["questions"][0]["question"] == "Which database?"
    assert second["status_loaded"] == "askbridge: 1 pending"
    assert any(n["msg"] == "askbridge: reply sent for call-1" for n in second["notes"])

    log = read_log(data_dir, pending_session)
    replies = [e for e in log if e["type"] == "user/message" and e.get("source")]
    assert len(replies) == 1
    assert json.loads(replies[0]["content"][0]["text"])["answers"] == [
        {"id": "db", "selected": ["Postgres"]}
    ]
    assert [e["cause"] for e in log if e["type"] == "turn/start"] == ["prompt", "inbox"]
