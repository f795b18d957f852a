"""S12: host.log at INFO tells a question's life without its text.

A real `askbridge serve` (both host modes, the harness's) asks a timed question to
two windows; one answers, the other's card is withdrawn (first answer wins: no
"dropped" line); a second question goes pending and is answered late. host.log
names each step and the client, and holds no question or answer text at INFO.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
from e2e_scripts import SQLITE, ask_step, script, text_step

from askbridge.testing import AskbridgeClient
from askbridge.testing.hosts import stop_host
from other_user import MCP_INITIALIZE


def _log(data: Path, log_file: Path, host_mode: str) -> str:
    """The host's log: a's --log-file (inline: a is the host; auto: the host a started
    takes it over), and host.log should a host have started without it."""
    text = log_file.read_text() if log_file.exists() else ""
    host_log = data / "host.log"
    return text + (host_log.read_text() if host_log.exists() else "")


async def test_S12_host_log_tells_a_questions_life_without_its_text(
    tmp_path: Path, host_mode: str
) -> None:
    data, log_file = tmp_path / "data", tmp_path / "serve.log"
    model = script(
        ask_step(timeout=600),
        text_step("after"),
        ask_step(call_id="call-2", timeout=1),
        text_step("later"),
        text_step("woken"),
    )
    args = ["--log-file", str(log_file), "--log-level", "INFO"]
    try:
        async with (
            AskbridgeClient.connect(data_dir=data, model=model, ask_mode="timed", args=args) as a,
            AskbridgeClient.connect(data_dir=data, host="auto") as b,  # attaches to a's host
        ):
            a.answer_with(lambda ask: SQLITE)
            b.answer_with(None)  # b shows the card, never answers
            session = await a.new_session()
            await b.load_session(session)
            assert await a.prompt(session, "go") == "end_turn"
            a.answer_with(None)
            async with anyio.create_task_group() as tg:  # call-2: claimed, released, pending
                tg.start_soon(a.prompt, session, "again")
                await a.wait_for(lambda: len(a.asks) == 2)
                claim = await a.claim(session, "call-2")
                claim.release()
            assert await a.answer_late(session, "call-2", SQLITE)
            await a.wait_for(lambda: len(a.updates(session, "turn_started")) == 3)
    finally:
        stop_host(data)
    log = _log(data, log_file, host_mode)
    assert "question call-1 asked in session" in log and "to 2 windows" in log
    assert "question call-1 answered by client" in log
    assert "withdrawn from 1 other card" in log
    assert "question call-2 claimed by client 1" in log
    assert "question call-2 released by client 1" in log
    assert "question call-2 pending" in log
    assert "late reply to call-2 from client 1 taken" in log
    assert "dropped" not in log  # first answer wins is not a dropped reply
    assert "Which database?" not in log and "SQLite" not in log  # no text at INFO


def test_S12_the_mcp_door_logs_its_data_dir_and_model(tmp_path: Path, host_mode: str) -> None:
    data, log_file = tmp_path / "data", tmp_path / "mcp.log"
    init = MCP_INITIALIZE
    command = [sys.executable, "-m", "askbridge.cli", "mcp", "--data-dir", str(data)]
    command += ["--host", host_mode, "--log-file", str(log_file), "--log-level", "INFO"]
    try:
        done = subprocess.run(
            command, input=json.dumps(init) + "\n", capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
    finally:
        stop_host(data)
    log = _log(data, log_file, host_mode)
    assert f"serving an MCP client (door mcp, data dir {data}, pid" in log
    assert "data dir ?" not in log and "model none" not in log
    assert "model of the MCP client's own agent" in log
