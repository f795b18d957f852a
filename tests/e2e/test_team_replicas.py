"""Two hosts on one team store (G4, G5), as their windows see them: real `askbridge serve`
processes on two data directories and one real PostgreSQL, in both host modes.

Host A creates and runs a session; a window on host B loads it and gets a read-only
replica: A's later turns reach B's window (G5, M1), and a prompt from B is refused
naming the host that runs the session (G4), never run twice. A killed with a question
pending: B opens the session, takes it over and resumes it, the question answerable
there (G8).
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import anyio
import pytest
from e2e_scripts import SQLITE, ask_step, script, text_step

from askbridge.testing import AskbridgeClient
from askbridge.testing.hosts import holder_pid, kill_host
from askbridge.testing.wire import Message, RawServer
from lsp_steps import new_session, prompt_params, start_prompt
from postgres import Database

pytestmark = pytest.mark.timeout(120)


def store_env(url: str) -> dict[str, str]:
    return {"ASKBRIDGE_STORE": url}


def turn_ended(turn_id: str, sid: str) -> Any:
    def match(message: Message) -> bool:
        if message.get("method") != "session/update":
            return False
        params = message["params"]
        update = params["update"]
        return bool(
            params["sessionId"] == sid
            and update["sessionUpdate"] == "turn_ended"
            and update["turnId"] == turn_id
        )

    return match


def owner_of(db: Database, sid: str) -> str:
    [(owner,)] = db.query("SELECT owner_host FROM askbridge.sessions WHERE id = %s", sid)
    return str(owner)


async def test_G4_G5_a_window_on_another_host_follows_a_replica_and_is_told_who_runs_it(
    pg_database: Database, tmp_path: Path
) -> None:
    env = store_env(pg_database.password_url())
    model = script(text_step("one"), text_step("two"))
    async with AskbridgeClient.connect(data_dir=tmp_path / "a", model=model, env=env) as a:
        sid = await a.new_session()
        assert await a.prompt(sid, "go") == "end_turn"
        host_a = owner_of(pg_database, sid)
        async with RawServer.start(tmp_path / "b", env=env) as b:
            await b.initialize()
            loaded = await b.call("session/load", {"sessionId": sid})
            assert "result" in loaded, loaded
            refused = await b.call("session/prompt", prompt_params(sid))
            error = refused["error"]
            assert host_a in error["message"] and "not by this one" in error["message"], error
            assert error["data"] == {"name": "StoreError", "code": "STORE_ERROR"}, error
            # The session stays A's: B's load took no lease, and ran no turn (G4).
            assert owner_of(pg_database, sid) == host_a
            # A's next turn reaches B's window through its replica (G5).
            assert await a.prompt(sid, "again") == "end_turn"
            await b.expect(turn_ended("t-2", sid), timeout=10)
            text = [
                m["params"]["update"]["content"]["text"]
                for m in b.received
                if m.get("method") == "session/update"
                and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
            ]
            assert text == ["two"], text
    rows = pg_database.query(
        "SELECT count(*) FROM askbridge.events WHERE session_id = %s AND type = 'turn/start'",
        sid,
    )
    assert rows == [(2,)]  # two turns, both A's: B's refused prompt ran nowhere


def event_types(db: Database, sid: str) -> list[str]:
    rows = db.query("SELECT type FROM askbridge.events WHERE session_id = %s ORDER BY seq", sid)
    return [kind for (kind,) in rows]


async def test_G8_a_host_killed_with_a_question_pending_is_taken_over_by_the_next_host(
    pg_database: Database, tmp_path: Path
) -> None:
    """kill -9 of A while its question waits: B opens the session, takes it over (its
    owner's liveness lock is free), repairs it as after a restart (P7: the question
    continued), and a late reply on B wakes the agent there (G4, G8, L4)."""
    env = store_env(pg_database.password_url())
    model = script(ask_step(timeout=600), text_step("after"))
    args = ("--model", json.dumps(model), "--ask-mode", "timed")
    async with RawServer.start(tmp_path / "a", *args, env=env) as a:
        await a.initialize()
        sid = await new_session(a)
        await start_prompt(a, sid)
        await a.server_request("userQuestions/ask")
        host_a = owner_of(pg_database, sid)
        assert kill_host(tmp_path / "a") is not None
    assert "tool/call" in event_types(pg_database, sid)  # committed before it was asked (D1)
    async with AskbridgeClient.connect(data_dir=tmp_path / "b", env=env) as b:
        await b.load_session(sid)
        assert owner_of(pg_database, sid) not in (host_a, None)  # B runs it now
        view = await b.view(sid)
        assert [(q["callId"], q["state"]) for q in view["active"]] == [("call-1", "continued")]
        assert await b.answer_late(sid, "call-1", SQLITE) is True
        with anyio.fail_after(30):
            await b.wait_for(lambda: len(b.updates(sid, "turn_ended")) == 1)
        assert (await b.view(sid))["active"] == []
    types = event_types(pg_database, sid)
    assert types.count("tool/result") == 1 and types[-1] == "turn/end", types


LAPSE = "UPDATE askbridge.sessions SET lease_until = clock_timestamp() WHERE id = %s"


async def test_G4_a_host_whose_session_was_taken_over_tells_its_window_who_runs_it(
    pg_database: Database, tmp_path: Path
) -> None:
    """A paused past its lease (moved to its end in the database, not waited for): B opens
    the session and runs it; A, resumed, learns at its next renewal that it lost the
    session, tells its window in one line which host runs it now, and unloads it: A's
    next prompt finds a replica and is refused naming B (G4, M6)."""
    env = store_env(pg_database.password_url())
    model = script(text_step("one"), text_step("two"))
    async with RawServer.start(tmp_path / "a", "--model", json.dumps(model), env=env) as a:
        await a.initialize()
        sid = await new_session(a)
        reply = await a.call("session/prompt", prompt_params(sid))
        assert reply["result"] == {"stopReason": "end_turn"}, reply
        pid = holder_pid(tmp_path / "a")
        assert pid is not None
        os.kill(pid, signal.SIGSTOP)  # its connections stay open: its liveness lock is held
        try:
            pg_database.query(LAPSE, sid)
            async with AskbridgeClient.connect(data_dir=tmp_path / "b", env=env) as b:
                await b.load_session(sid)
                host_b = owner_of(pg_database, sid)
                os.kill(pid, signal.SIGCONT)
                told = await a.expect(told_about(sid), timeout=15)
                line = told["params"]["update"]["content"]["text"]
                assert host_b in line and "\n" not in line, line
                refused = await a.call("session/prompt", prompt_params(sid))
                assert host_b in refused["error"]["message"], refused
                assert await b.prompt(sid, "on b") == "end_turn"  # B runs it
        finally:
            os.kill(pid, signal.SIGCONT)


def told_about(sid: str) -> Any:
    def match(message: Message) -> bool:
        if message.get("method") != "session/update" or message["params"]["sessionId"] != sid:
            return False
        update = message["params"]["update"]
        return bool(
            update["sessionUpdate"] == "agent_message_chunk"
            and "not by this one" in update["content"]["text"]
        )

    return match
