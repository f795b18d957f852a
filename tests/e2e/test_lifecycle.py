"""protocol.md "Lifecycle" and "Command line", against the real `askbridge serve` process.

initialize (capabilities, serverInfo, initializationOptions), shutdown/exit
statuses, `$/cancelRequest` for outstanding asks after shutdown, end of input
(turns cancelled, claims released, store consistent, status 0), `--stdio`,
invalid flags (usage, status 2), and stdout carrying nothing but frames.
Every RawServer read is strict about stdout, so each test here also checks that.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
from e2e_scripts import (
    DB_QUESTION,
    SQLITE,
    ask_step,
    of_type,
    script,
    stored_events,
    text_step,
    tool_text,
)

from askbridge import __version__
from askbridge.testing.wire import RawServer, serve_command, updates_of
from lsp_steps import new_session, open_session, start_prompt, until_ask

pytestmark = pytest.mark.timeout(60)


async def test_initialize_result_and_clean_exit_with_stdio_flag(tmp_path: Path) -> None:
    """Lifecycle: serverInfo, experimental.userQuestions {version: 1}; `--stdio` is accepted;
    shutdown answers null, exit after shutdown ends with status 0 and nothing else is sent."""
    async with RawServer.start(tmp_path / "data", "--stdio") as server:
        reply = await server.initialize()
        assert reply["result"] == {
            "capabilities": {"experimental": {"userQuestions": {"version": 1}}},
            "serverInfo": {"name": "askbridge", "version": __version__},
        }
        assert await server.shutdown_and_exit() == 0
        assert await server.read_to_end() == []


async def test_exit_without_shutdown_ends_with_status_1(tmp_path: Path) -> None:
    """Lifecycle: `exit` without a prior `shutdown` ends the process with status 1."""
    async with RawServer.start(tmp_path / "data") as server:
        await server.initialize()
        await server.notify("exit")
        assert await server.wait() == 1


async def test_initialization_options_are_the_defaults_of_new_sessions(tmp_path: Path) -> None:
    """Lifecycle: initializationOptions {model, askUserQuestion} apply to session/new;
    a session/new that names only a timeout keeps the default mode (timed)."""
    model = script(ask_step(), text_step("done"))
    options = {"model": model, "askUserQuestion": {"mode": "timed", "timeout": 60}}
    async with RawServer.start(tmp_path / "data") as server:
        await server.initialize(initialization_options=options)
        for settings, limit_ms in (({}, 60_000), ({"askUserQuestion": {"timeout": 30}}, 30_000)):
            sid = (await server.call("session/new", settings))["result"]["sessionId"]
            prompt_id = await start_prompt(server, sid)
            ask = await server.server_request("userQuestions/ask")
            assert ask["params"]["wait"] == {"callId": "call-1", "timed": True}  # timed mode
            claim_id = await server.request(
                "userQuestions/attachWait",
                {"sessionId": sid, "callId": "call-1", "partialResultToken": f"t-{limit_ms}"},
            )
            frame = await server.notification("$/progress")
            assert frame["params"]["token"] == f"t-{limit_ms}"
            assert limit_ms - 10_000 < frame["params"]["value"]["remainingMs"] <= limit_ms
            await server.respond(ask["id"], SQLITE)
            assert (await server.response(claim_id))["result"] is None
            assert (await server.response(prompt_id))["result"] == {"stopReason": "end_turn"}
        assert await server.shutdown_and_exit() == 0


async def test_invalid_initialization_options_are_invalid_params(tmp_path: Path) -> None:
    """Errors: invalid session settings (here in initializationOptions) are -32602 with data.errors."""
    async with RawServer.start(tmp_path / "data") as server:
        reply = await server.initialize(
            initialization_options={"askUserQuestion": {"timeout": 0}, "model": {"kind": "nope"}}
        )
        assert reply["error"]["code"] == -32602
        fields = {e["field"] for e in reply["error"]["data"]["errors"]}
        assert fields == {
            "initializationOptions.askUserQuestion.timeout",
            "initializationOptions.model.kind",
        }


async def test_shutdown_cancels_every_outstanding_ask(tmp_path: Path) -> None:
    """Lifecycle: after `shutdown` the server sends $/cancelRequest for each outstanding
    userQuestions/ask; exit then ends with status 0. The client is leaving, so its questions
    are not settled by it: each call ends outcome-unknown and stays answerable (M6, P3)."""
    model = script(ask_step(), text_step("after"))
    async with RawServer.start(tmp_path / "data", "--model", json.dumps(model)) as server:
        await server.initialize()
        sids = [await new_session(server) for _ in range(2)]
        for sid in sids:
            await start_prompt(server, sid)
        asks = [await server.server_request("userQuestions/ask") for _ in sids]
        shutdown_id = await server.request("shutdown")
        cancels = [await server.notification("$/cancelRequest") for _ in asks]
        assert sorted(c["params"]["id"] for c in cancels) == sorted(a["id"] for a in asks)
        assert (await server.response(shutdown_id))["result"] is None
        for ask in asks:  # a well-behaved client acknowledges; the server needs no more
            await server.respond_error(ask["id"], -32800, "Request cancelled")
        await server.notify("exit")
        assert await server.wait() == 0
        await server.read_to_end()
    for sid in sids:
        results = of_type(await stored_events(tmp_path / "data", sid), "tool/result")
        assert [r["error"]["code"] for r in results] == ["TOOL_OUTCOME_UNKNOWN"]


async def test_end_of_input_cancels_turns_releases_claims_and_exits_0(tmp_path: Path) -> None:
    """Lifecycle, M6: end of input ends the running turn (turn/end `cancelled` is committed)
    although the client held a claim, and exits 0. The open question is not settled by the
    disconnect: its call ends outcome-unknown, continued (P3), and a restarted server offers
    it as answerable (L1)."""
    data = tmp_path / "data"
    model = script(ask_step(timeout=600), text_step("after the reply"))
    async with RawServer.start(data, "--model", json.dumps(model), "--ask-mode", "timed") as server:
        sid = await open_session(server)
        await start_prompt(server, sid)
        await server.server_request("userQuestions/ask")
        await server.request(
            "userQuestions/attachWait",
            {"sessionId": sid, "callId": "call-1", "partialResultToken": 7},
        )
        assert (await server.notification("$/progress"))["params"]["token"] == 7
        server.close_input()
        assert await server.wait() == 0
    events = await stored_events(data, sid)
    assert [e["type"] for e in events][-3:] == ["tool/call", "tool/result", "turn/end"]
    assert events[-2]["error"] == {"name": "ToolError", "code": "TOOL_OUTCOME_UNKNOWN"}
    assert events[-1]["stopReason"] == "cancelled"
    async with RawServer.start(data) as server:
        await server.initialize()
        assert (await server.call("session/load", {"sessionId": sid}))["result"] == {}
        change = await server.notification("userQuestions/didChange")
        [active] = change["params"]["changes"]  # S2: the snapshot of a new subscriber
        assert (active["callId"], active["state"]) == ("call-1", "continued")
        assert active["questions"] == [DB_QUESTION]
        reply = await server.call(
            "userQuestions/answer", {"sessionId": sid, "callId": "call-1", "answer": SQLITE}
        )
        assert reply["result"] is True
        await server.notification(
            "session/update", lambda p: p["update"]["sessionUpdate"] == "turn_ended"
        )
        assert await server.shutdown_and_exit() == 0
    [repair] = of_type(await stored_events(data, sid), "tool/result")
    assert repair["error"] == {"name": "ToolError", "code": "TOOL_OUTCOME_UNKNOWN"}


async def test_stdout_carries_only_frames_while_logging_at_debug(tmp_path: Path) -> None:
    """Command line: logs never go to stdout, even at --log-level DEBUG; they reach stderr."""
    model = script(ask_step(), text_step("done"))
    args = ("--model", json.dumps(model), "--log-level", "DEBUG")
    async with RawServer.start(tmp_path / "data", *args) as server:
        _sid, prompt_id, ask = await until_ask(server)
        await server.respond(ask["id"], SQLITE)
        await server.notify("no/suchNotification", {})  # logged at DEBUG
        assert (await server.response(prompt_id))["result"] == {"stopReason": "end_turn"}
        assert await server.shutdown_and_exit() == 0
        await server.read_to_end()  # strict: raises on any non-frame byte
        [update] = updates_of(server.received, "tool_call_update")
        assert tool_text(update) == '{"answers":[{"id":"db","selected":["SQLite"]}]}'
        assert "DEBUG" in server.logs()


async def test_log_file_receives_the_logs(tmp_path: Path) -> None:
    """Command line: --log-file PATH gets the logs instead of stderr."""
    log_file = tmp_path / "serve.log"
    async with RawServer.start(
        tmp_path / "data", "--log-file", str(log_file), "--log-level", "debug"
    ) as server:
        await server.initialize()
        await server.notify("no/suchNotification", {})
        assert await server.shutdown_and_exit() == 0
        assert "no/suchNotification" in log_file.read_text()
        assert "no/suchNotification" not in server.stderr_text()


@pytest.mark.parametrize(
    "flags",
    [
        ["--ask-timeout", "0"],
        ["--ask-timeout", "2147484"],
        ["--ask-mode", "eventually"],
        ["--model", '{"kind": "nope"}'],
        ["--model", "script:/no/such/file.json"],
        ["--max-turn-requests", "0"],
        ["--no-such-flag"],
    ],
)
def test_invalid_flags_print_usage_and_exit_2(tmp_path: Path, flags: list[str]) -> None:
    """Errors / Command line: invalid flags end the process with a one-line usage error
    naming the command (no usage block burying it) and status 2."""
    done = subprocess.run(
        serve_command(tmp_path / "data", *flags),
        input=b"",
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(b"askbridge serve: error: "), done.stderr
    assert done.stderr.endswith(b"; see askbridge serve --help\n") and done.stderr.count(b"\n") == 1
    assert done.stdout == b""


@pytest.mark.inline_only  # with --host auto a second front door attaches (H2)
def test_a_data_dir_in_use_is_refused_with_a_message(tmp_path: Path) -> None:
    """main.py: a second server on the same data directory exits 1 and says who holds it."""
    data = tmp_path / "data"
    first = subprocess.Popen(serve_command(data), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert first.stdin is not None
        for _ in range(200):  # the first server takes the lock as it starts
            if (data / "askbridge.lock").exists() and (data / "askbridge.lock").read_text():
                break
            time.sleep(0.05)
        second = subprocess.run(
            serve_command(data), input=b"", capture_output=True, timeout=30, check=False
        )
        assert second.returncode == 1
        assert b"in use by process" in second.stderr and second.stdout == b""
    finally:
        if first.stdin is not None:
            first.stdin.close()
        assert first.wait(timeout=30) == 0
