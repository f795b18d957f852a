"""Two hosts on one team store (G4, G5), as their windows see them: real `askbridge serve`
processes on two data directories and one real PostgreSQL, in both host modes.

Host A creates and runs a session; a window on host B loads it and gets a read-only
replica: A's later turns reach B's window (G5, M1), and a prompt from B is refused
naming the host that runs the session (G4), never run twice.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from e2e_scripts import script, text_step

from askbridge.testing import AskbridgeClient
from askbridge.testing.wire import Message, RawServer
from lsp_steps import prompt_params
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
