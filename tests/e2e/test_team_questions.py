"""Questions across hosts on one team store (G5, G6, M2, M5): real `askbridge serve`
processes on two data directories and one real PostgreSQL, in both host modes.

A question asked in a session host A runs is shown as a card in a window on host B (a
replica's open question, read from A's committed log); B's answer is what A's agent
gets, exactly, consumed once in the commit of its tool result. Windows on both hosts
answering the same question at once: exactly one answer wins in the database and is
the call's one result; the other window's card ends as answered elsewhere.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from e2e_scripts import ASK_TIMED_OUT_DATA, POSTGRES, SQLITE, ask_step, script, text_step

from askbridge.testing import AskbridgeClient
from askbridge.testing.hosts import kill_host
from askbridge.testing.wire import Message, RawServer
from lsp_steps import new_session, start_prompt
from postgres import Database

pytestmark = pytest.mark.timeout(180)

TIMED = ("--ask-mode", "timed")


def store_env(url: str) -> dict[str, str]:
    return {"ASKBRIDGE_STORE": url}


def results(db: Database, sid: str) -> dict[str, list[str]]:
    """Each call's tool results in the session's log: the text the model got."""
    rows = db.query(
        "SELECT body FROM askbridge.events WHERE session_id = %s AND type = 'tool/result' "
        "ORDER BY seq",
        sid,
    )
    found: dict[str, list[str]] = {}
    for (body,) in rows:
        event = body if isinstance(body, dict) else json.loads(body)
        found.setdefault(event["callId"], []).append(event["content"])
    return found


def answer_rows(db: Database, sid: str) -> list[tuple[Any, ...]]:
    return db.query(
        "SELECT call_id, answer::text, host, withdrawn_at IS NULL, consumed_seq IS NOT NULL "
        "FROM askbridge.answers WHERE session_id = %s ORDER BY call_id, id",
        sid,
    )


def card_of(call_id: str) -> Any:
    def match(message: Message) -> bool:
        return bool(
            message.get("method") == "userQuestions/ask"
            and "id" in message
            and message["params"]["wait"]["callId"] == call_id
        )

    return match


async def test_G6_a_question_asked_on_host_a_is_answered_in_a_window_on_host_b(
    pg_database: Database, tmp_path: Path
) -> None:
    """A's turn asks; B's window (a replica of A's session) gets the card (G5, M2) and
    answers; A's prompt ends and its tool result is exactly B's answer, consumed once."""
    env = store_env(pg_database.password_url())
    model = script(ask_step(timeout=600), text_step("after"))
    args = ("--model", json.dumps(model), *TIMED)
    async with RawServer.start(tmp_path / "a", *args, env=env) as a:
        await a.initialize()
        sid = await new_session(a)
        prompt = await start_prompt(a, sid)
        await a.server_request("userQuestions/ask")  # A's own window has the card too
        async with RawServer.start(tmp_path / "b", *TIMED, env=env) as b:
            await b.initialize()
            loaded = await b.call("session/load", {"sessionId": sid})
            assert "result" in loaded, loaded
            card = await b.server_request("userQuestions/ask", timeout=15)
            await b.respond(card["id"], SQLITE)
            done = await a.response(prompt, timeout=20)
            assert done["result"] == {"stopReason": "end_turn"}, done
            # A's card is withdrawn: answered elsewhere (M2).
            await a.expect(lambda m: m.get("method") == "$/cancelRequest", timeout=10)
    [result] = results(pg_database, sid)["call-1"]
    assert json.loads(result) == SQLITE
    [(call_id, answer, _, live, consumed)] = answer_rows(pg_database, sid)
    assert (call_id, json.loads(answer), live, consumed) == ("call-1", SQLITE, True, True)


RACES = 30


async def test_G6_M5_windows_on_two_hosts_answering_at_once_settle_each_call_exactly_once(
    pg_database: Database, tmp_path: Path
) -> None:
    """Each of 30 questions is answered at the same moment by a window on A (Postgres)
    and a window on B (SQLite): the database lets one answer in; the call has exactly
    one result, that answer; its one row is live and consumed; the loser's answer is
    in no result and no row (never both, never neither)."""
    env = store_env(pg_database.password_url())
    calls = [f"call-{i}" for i in range(1, RACES + 1)]
    model = script(*[ask_step(call, timeout=600) for call in calls], text_step("done"))
    args = ("--model", json.dumps(model), *TIMED)
    async with RawServer.start(tmp_path / "a", *args, env=env) as a:
        await a.initialize()
        sid = await new_session(a)
        async with RawServer.start(tmp_path / "b", *TIMED, env=env) as b:
            await b.initialize()
            loaded = await b.call("session/load", {"sessionId": sid})
            assert "result" in loaded, loaded
            prompt = await start_prompt(a, sid)
            for call in calls:
                card_a = await a.expect(card_of(call), timeout=15)
                card_b = await b.expect(card_of(call), timeout=15)
                await a.respond(card_a["id"], POSTGRES)
                await b.respond(card_b["id"], SQLITE)
            done = await a.response(prompt, timeout=30)
            assert done["result"] == {"stopReason": "end_turn"}, done
    by_call = {row[0]: row for row in answer_rows(pg_database, sid)}
    found = results(pg_database, sid)
    assert sorted(found) == sorted(calls) and sorted(by_call) == sorted(calls)
    winners = {compact(POSTGRES): 0, compact(SQLITE): 0}
    for call in calls:
        [result] = found[call]  # exactly one result per call
        rows = [row for row in answer_rows(pg_database, sid) if row[0] == call]
        [(_, answer, _, live, consumed)] = rows  # one answer got in, and was consumed once
        assert live and consumed, rows
        assert json.loads(result) == json.loads(answer), (call, result, answer)
        winners[compact(json.loads(answer))] += 1
    assert sum(winners.values()) == RACES, winners
    print("winners:", winners)  # who won is the database's race: not asserted


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


LATE_ROUNDS = 8


async def continued(server: RawServer, sid: str, call_id: str) -> None:
    """Until the session's view (on that host) shows `call_id` continued (pending)."""
    with anyio.fail_after(15):
        while True:
            view = (await server.call("userQuestions/list", {"sessionId": sid}))["result"]
            if any(q["callId"] == call_id and q["state"] == "continued" for q in view["active"]):
                return
            await anyio.sleep(0.05)


async def test_G6_L2_late_replies_from_windows_on_two_hosts_are_taken_exactly_once(
    pg_database: Database, tmp_path: Path
) -> None:
    """A question that went pending on A is answered late from a window on A and a window
    on B at the same moment, 8 times: exactly one reply is taken (`true`), the other is
    REPLY_QUEUED or `false` (L2, L6); A's log queues exactly that one (L4) and its answer
    row is consumed by it; the agent wakes on A for it."""
    env = store_env(pg_database.password_url())
    calls = [f"call-{i}" for i in range(1, LATE_ROUNDS + 1)]
    steps = [step for call in calls for step in (ask_step(call, timeout=600), text_step("w"))]
    model = script(*steps, text_step("done"))
    args = ("--model", json.dumps(model), *TIMED)
    async with RawServer.start(tmp_path / "a", *args, env=env) as a:
        await a.initialize()
        sid = await new_session(a)
        async with RawServer.start(tmp_path / "b", *TIMED, env=env) as b:
            await b.initialize()
            assert "result" in await b.call("session/load", {"sessionId": sid})
            await start_prompt(a, sid)
            for call in calls:
                card = await a.expect(card_of(call), timeout=15)
                await a.respond_error(card["id"], -32000, "countdown ran out", ASK_TIMED_OUT_DATA)
                await continued(a, sid, call)
                await continued(b, sid, call)
                params = {"sessionId": sid, "callId": call}
                if int(call.split("-")[1]) % 2:  # each host's reply goes out first in turn
                    from_a = await a.request("userQuestions/answer", {**params, "answer": POSTGRES})
                    from_b = await b.request("userQuestions/answer", {**params, "answer": SQLITE})
                else:
                    from_b = await b.request("userQuestions/answer", {**params, "answer": SQLITE})
                    from_a = await a.request("userQuestions/answer", {**params, "answer": POSTGRES})
                replies = [await a.response(from_a, 15), await b.response(from_b, 15)]
                taken = [r for r in replies if r.get("result") is True]
                others = [outcome(r) for r in replies if r not in taken]
                assert len(taken) == 1 and others in ([False], ["REPLY_QUEUED"]), replies
    queued = reply_items(pg_database, sid)
    rows = answer_rows(pg_database, sid)
    assert sorted(queued) == sorted(calls), queued
    for call in calls:
        [(_, answer, _, live, consumed)] = [row for row in rows if row[0] == call]
        assert live and consumed and queued[call] == [json.loads(answer)["answers"]], call


def reply_items(db: Database, sid: str) -> dict[str, list[Any]]:
    """The late replies queued in the session's log (L4), by call: their answers."""
    rows = db.query(
        "SELECT body FROM askbridge.events WHERE session_id = %s "
        "AND type = 'agent/inbox/inserted' ORDER BY seq",
        sid,
    )
    found: dict[str, list[Any]] = {}
    for (body,) in rows:
        event = body if isinstance(body, dict) else json.loads(body)
        source = event["message"].get("source") or {}
        if source.get("kind") == "user-question-reply":
            found.setdefault(source["callId"], []).append(event["message"]["answers"])
    return found


def outcome(reply: Message) -> Any:
    """A reply's result, or its error's code."""
    return reply["result"] if "result" in reply else reply["error"]["data"]["code"]


async def test_G8_an_answer_given_on_b_after_its_owner_died_is_the_late_reply_on_the_next_owner(
    pg_database: Database, tmp_path: Path
) -> None:
    """A is killed (kill -9) with a question open; B's window answers its card (the
    database keeps the answer, G6, G8); host C opens the session, takes it over and
    repairs it (P7: the question continued), and takes that stored answer as its late
    reply (G4), consuming it once: the agent wakes on C with exactly B's answer."""
    env = store_env(pg_database.password_url())
    model = script(ask_step(timeout=600), text_step("after"))
    args = ("--model", json.dumps(model), *TIMED)
    async with RawServer.start(tmp_path / "a", *args, env=env) as a:
        await a.initialize()
        sid = await new_session(a)
        await start_prompt(a, sid)
        await a.server_request("userQuestions/ask")
        async with RawServer.start(tmp_path / "b", *TIMED, env=env) as b:
            await b.initialize()
            assert "result" in await b.call("session/load", {"sessionId": sid})
            card = await b.server_request("userQuestions/ask", timeout=15)
            assert kill_host(tmp_path / "a") is not None
            await b.respond(card["id"], SQLITE)
            with anyio.fail_after(15):
                while not answer_rows(pg_database, sid):  # noqa: ASYNC110  (a database row)
                    await anyio.sleep(0.05)
    async with AskbridgeClient.connect(data_dir=tmp_path / "c", env=env) as c:
        await c.load_session(sid)
        with anyio.fail_after(30):
            await c.wait_for(lambda: len(c.updates(sid, "turn_ended")) == 1)
        assert (await c.view(sid))["active"] == []
    assert reply_items(pg_database, sid) == {"call-1": [SQLITE["answers"]]}
    [(_, answer, _, live, consumed)] = answer_rows(pg_database, sid)
    assert (json.loads(answer), live, consumed) == (SQLITE, True, True)


MCP_QUESTION = {
    "id": "db",
    "question": "Which database?",
    "options": [{"label": "SQLite"}, {"label": "Postgres"}],
}


class McpLines:
    """`askbridge mcp` over its real stdio, one JSON-RPC message a line."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process, self.stdin, self.stdout = process, process.stdin, process.stdout
        self._ids = 0

    def call(self, method: str, params: Any) -> int:
        self._ids += 1
        message = {"jsonrpc": "2.0", "id": self._ids, "method": method, "params": params}
        self.stdin.write(json.dumps(message).encode() + b"\n")
        return self._ids

    async def reply(self, msg_id: int, timeout: float = 15) -> dict[str, Any]:
        with anyio.fail_after(timeout):
            while True:
                message = json.loads(await self.stdout.readline())
                if message.get("id") == msg_id and "method" not in message:
                    return message  # type: ignore[no-any-return]


async def test_G6_X1_a_question_from_an_mcp_door_on_host_a_is_answered_on_host_b(
    pg_database: Database, tmp_path: Path
) -> None:
    """An external agent asks through `askbridge mcp` on A; a window on B loads that
    session (a replica of A's) and answers its card; the agent's tool call returns exactly
    B's answer, consumed once (G6, X1)."""
    url = pg_database.password_url()
    process = await asyncio.create_subprocess_exec(
        str(Path(sys.executable).with_name("askbridge")),
        *("mcp", "--data-dir", str(tmp_path / "a"), "--store", url),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    mcp = McpLines(process)
    try:
        info = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        }
        assert "result" in await mcp.reply(mcp.call("initialize", info))
        mcp.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        arguments = {"questions": [MCP_QUESTION], "timeout": 600}
        call = mcp.call("tools/call", {"name": "ask_user_question", "arguments": arguments})
        async with RawServer.start(tmp_path / "b", env=store_env(url)) as b:
            await b.initialize()
            with anyio.fail_after(15):
                sid = None
                while sid is None:  # the external session's header is committed first (D1)
                    listed = (await b.call("session/list", {}))["result"]["sessions"]
                    sid = next((s["sessionId"] for s in listed if s.get("origin") == "mcp"), None)
            assert "result" in await b.call("session/load", {"sessionId": sid})
            card = await b.server_request("userQuestions/ask", timeout=15)
            await b.respond(card["id"], SQLITE)
            done = await mcp.reply(call, timeout=20)
        [block] = done["result"]["content"]
        assert json.loads(block["text"]) == SQLITE, done
    finally:
        process.stdin.close()  # type: ignore[union-attr]
        with anyio.fail_after(10):
            await process.wait()
    [(_, answer, _, live, consumed)] = answer_rows(pg_database, sid)
    assert (json.loads(answer), live, consumed) == (SQLITE, True, True)
