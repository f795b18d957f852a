"""Claims across hosts on one team store (G7, C1-C5): a window on host B claims a question
of a session host A runs; A's deadline stays held while the claim does, and the question
goes pending at once when the claim is released after the deadline, or when B was killed
and its claim's lease lapsed (moved back in the database, as no test sleeps 10 s)."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from e2e_scripts import SQLITE, ask_step, script, text_step

from askbridge.testing.hosts import kill_host
from askbridge.testing.wire import RawServer
from lsp_steps import new_session, start_prompt
from postgres import Database

pytestmark = pytest.mark.timeout(120)

TIMED = ("--ask-mode", "timed")
DEADLINE_S = 1
LAPSE = "UPDATE askbridge.claims SET lease_until = clock_timestamp() + interval '300 ms'"
# A lapse writes nothing; the owner re-reads at the lease's end it knew, 10 s on: the
# notification a claim would send makes it read the moved lease now.
HINT = "SELECT pg_notify('askbridge_claim', json_build_array(%s::text, 'call-1')::text)"


async def _claim(server: RawServer, sid: str) -> tuple[int, int]:
    """A window claims call-1 (`userQuestions/attachWait`): the request id and the one
    frame's remainingMs (C3)."""
    claim = server.next_id()
    params = {"sessionId": sid, "callId": "call-1", "partialResultToken": claim}
    message = {"jsonrpc": "2.0", "id": claim, "method": "userQuestions/attachWait"}
    await server.send({**message, "params": params})
    progress = await server.notification(
        "$/progress", lambda params: params["token"] == claim, timeout=10
    )
    return claim, progress["params"]["value"]["remainingMs"]


async def _logged(server: RawServer, line: str) -> None:
    """A line in another process's log: no event this loop can wait on."""
    with anyio.move_on_after(15):
        while line not in server.logs():  # noqa: ASYNC110
            await anyio.sleep(0.05)
    assert line in server.logs(), server.logs()[-3000:]


@pytest.mark.parametrize("end", ["release", "kill"])
async def test_G7_a_claim_on_host_b_holds_host_a_deadline_until_released_or_lapsed(
    pg_database: Database, tmp_path: Path, end: str
) -> None:
    """A's own window claims first (so B has time to start); B's window claims the
    replica's question, then A's lets go: the deadline passes while B's claim holds
    (C5 across hosts) and the question stays open; B's release, or B's kill -9 and its
    lease's lapse, makes it pending at once (TW5)."""
    env = {"ASKBRIDGE_STORE": pg_database.password_url()}
    model = script(ask_step(timeout=DEADLINE_S), text_step("after"))
    args = ("--model", json.dumps(model), *TIMED, "--log-level", "INFO")
    async with RawServer.start(tmp_path / "a", *args, env=env) as a:
        await a.initialize()
        sid = await new_session(a)
        prompt = await start_prompt(a, sid)
        await a.server_request("userQuestions/ask")
        local, _ = await _claim(a, sid)
        async with RawServer.start(tmp_path / "b", *TIMED, env=env) as b:
            await b.initialize()
            loaded = await b.call("session/load", {"sessionId": sid})
            assert "result" in loaded, loaded
            await b.server_request("userQuestions/ask", timeout=15)
            remote, remaining = await _claim(b, sid)
            assert 0 <= remaining <= DEADLINE_S * 1000  # A's deadline, from A's log
            await _logged(a, "question call-1 claimed from host")
            await a.notify("$/cancelRequest", {"id": local})
            with pytest.raises(TimeoutError):  # past the deadline: still open
                await a.response(prompt, timeout=DEADLINE_S * 2)
            [(claims,)] = pg_database.query(
                "SELECT count(*) FROM askbridge.claims WHERE session_id = %s", sid
            )
            assert claims == 1
            if end == "release":
                await b.notify("$/cancelRequest", {"id": remote})  # C4
            else:
                assert kill_host(tmp_path / "b") is not None
                pg_database.query(LAPSE)
                pg_database.query(HINT, sid)
            done = await a.response(prompt, timeout=10)  # TW5: pending at once
            assert done["result"] == {"stopReason": "end_turn"}, done


async def test_G7_C4_a_claim_on_host_b_ends_when_a_window_on_host_a_answers(
    pg_database: Database, tmp_path: Path
) -> None:
    """The wait ends on its owner (answered there): B's card ends, its attachWait is
    answered null (TW10) and its claim row is gone."""
    env = {"ASKBRIDGE_STORE": pg_database.password_url()}
    model = script(ask_step(timeout=600), text_step("after"))
    args = ("--model", json.dumps(model), *TIMED)
    async with RawServer.start(tmp_path / "a", *args, env=env) as a:
        await a.initialize()
        sid = await new_session(a)
        prompt = await start_prompt(a, sid)
        card = await a.server_request("userQuestions/ask")
        async with RawServer.start(tmp_path / "b", *TIMED, env=env) as b:
            await b.initialize()
            loaded = await b.call("session/load", {"sessionId": sid})
            assert "result" in loaded, loaded
            await b.server_request("userQuestions/ask", timeout=15)
            remote, remaining = await _claim(b, sid)
            assert 590_000 <= remaining <= 600_000
            await a.respond(card["id"], SQLITE)
            done = await a.response(prompt, timeout=20)
            assert done["result"] == {"stopReason": "end_turn"}, done
            ended = await b.response(remote, timeout=15)
            assert ended == {"jsonrpc": "2.0", "id": remote, "result": None}, ended
            with anyio.move_on_after(10):
                while pg_database.query("SELECT 1 FROM askbridge.claims"):  # noqa: ASYNC110
                    await anyio.sleep(0.05)
            assert pg_database.query("SELECT 1 FROM askbridge.claims") == []
