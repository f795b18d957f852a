"""Claims across hosts through the ACP door (G7, C1-C5, ACP-claims): an ACP client on host
B claims, with `_askbridge/attachWait`, a question of a session host A runs. A's deadline
stays held while B's claim does; `_askbridge/releaseWait`, or the client leaving B, makes
the question pending at once (TW5)."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from acp_harness import RecordingClient, ask_step, capabilities, held_ask, start_agent

from askbridge.testing.wire import RawServer
from lsp_steps import new_session, start_prompt
from postgres import Database
from scripts import question, script, text_step

pytestmark = pytest.mark.timeout(120)

TIMED = ("--ask-mode", "timed")
DEADLINE_S = 1


async def _lsp_claim(server: RawServer, sid: str) -> int:
    """A window on A claims call-1 (`userQuestions/attachWait`): the request's id."""
    claim = server.next_id()
    params = {"sessionId": sid, "callId": "call-1", "partialResultToken": claim}
    message = {"jsonrpc": "2.0", "id": claim, "method": "userQuestions/attachWait"}
    await server.send({**message, "params": params})
    await server.notification("$/progress", lambda params: params["token"] == claim, timeout=10)
    return claim


async def _logged(server: RawServer, line: str) -> None:
    """A line in another process's log: no event this loop can wait on."""
    with anyio.move_on_after(15):
        while line not in server.logs():  # noqa: ASYNC110
            await anyio.sleep(0.05)
    assert line in server.logs(), server.logs()[-3000:]


@pytest.mark.parametrize("end", ["release", "leave"])
async def test_G7_an_acp_claim_on_host_b_holds_host_a_deadline_until_released(
    pg_database: Database, tmp_path: Path, end: str
) -> None:
    """A's own window claims first (so B has time to start); B's ACP client claims the
    replica's question and gets A's deadline (C3), then A's window lets go: the deadline
    passes while B's claim holds (C5 across hosts); B's releaseWait, or B's client
    leaving (C4), makes it pending at once and removes the claim's row."""
    store = {"ASKBRIDGE_STORE": pg_database.password_url()}
    model = script(ask_step("call-1", question("db", "a"), timeout=DEADLINE_S), text_step("after"))
    args = ("--model", json.dumps(model), *TIMED, "--log-level", "INFO")
    async with RawServer.start(tmp_path / "a", *args, env=store) as a:
        await a.initialize()
        sid = await new_session(a)
        prompt = await start_prompt(a, sid)
        await a.server_request("userQuestions/ask")
        local = await _lsp_claim(a, sid)
        client = RecordingClient()
        held_ask(client)  # B's card stays open: only A's window could answer
        call = {"sessionId": sid, "callId": "call-1"}
        async with start_agent(client, tmp_path / "b", *TIMED, env=store) as (conn, _):
            await conn.initialize(
                protocol_version=1, client_capabilities=capabilities(askbridge=True)
            )
            await conn.load_session(cwd=str(tmp_path), session_id=sid, mcp_servers=[])
            await client.wait_for(lambda: client.ext("ask"))
            claimed = await conn.ext_method("askbridge/attachWait", call)
            assert 0 <= claimed["remainingMs"] <= DEADLINE_S * 1000  # A's deadline
            again = await conn.ext_method("askbridge/attachWait", call)
            assert 0 <= again["remainingMs"] <= claimed["remainingMs"]  # one claim only
            await _logged(a, "question call-1 claimed from host")
            await a.notify("$/cancelRequest", {"id": local})
            with pytest.raises(TimeoutError):  # past the deadline: still open
                await a.response(prompt, timeout=DEADLINE_S * 2)
            [(rows,)] = pg_database.query(
                "SELECT count(*) FROM askbridge.claims WHERE session_id = %s", sid
            )
            assert rows == 1
            if end == "release":
                released = await conn.ext_method("askbridge/releaseWait", call)
                assert released == {"released": True}
                assert pg_database.query("SELECT 1 FROM askbridge.claims") == []
                done = await a.response(prompt, timeout=10)  # TW5: pending at once
                assert done["result"] == {"stopReason": "end_turn"}, done
                again = await conn.ext_method("askbridge/releaseWait", call)
                assert again == {"released": False}
        done = await a.response(prompt, timeout=10) if end == "leave" else done
        assert done["result"] == {"stopReason": "end_turn"}, done
        assert pg_database.query("SELECT 1 FROM askbridge.claims") == []
