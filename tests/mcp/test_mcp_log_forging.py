"""S17: a field from outside cannot forge a host.log line.

What S12 makes the record of a question's life ("question … answered by client N") is
written by the host at INFO. An MCP client names itself (`clientInfo.name`, in the
external session's line) and a model names its tool calls (the call id, in every
question line); both may hold a newline followed by a line of the log's own format.
host.log (and the --log-file) keeps each on the line that named it, quoted.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from test_mcp_wire import raw_mcp

from askbridge.testing import AskbridgeClient
from scripts import ask_call, script, text_step

FORGED = "2026-12-06 03:56:36,123 INFO askbridge.host: question call-FAKE answered by client 7"
LINE = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} [A-Z]+ [\w.]+: ")


def log_of(data: Path, log_file: Path) -> str:
    """The host's log: the door's --log-file (inline: the door is the host; auto: the host
    it started takes it over), and host.log should a host have started without it."""
    text = log_file.read_text() if log_file.exists() else ""
    host_log = data / "host.log"
    return text + (host_log.read_text() if host_log.exists() else "")


def assert_not_forged(log: str, where: str) -> None:
    assert "call-FAKE answered by client 7" in log, log  # logged, inside its own line
    for line in log.splitlines():
        assert not line.startswith(FORGED), f"a forged line in the log:\n{log}"
        assert LINE.match(line), f"a line not of the log's format:\n{line}"
    [named] = [line for line in log.splitlines() if "call-FAKE" in line and where in line]
    assert "\\n2026-12-06 03:56:36,123 INFO askbridge.host: question call-FAKE" in named


async def test_S17_an_mcp_client_name_cannot_forge_a_host_log_line(tmp_path: Path) -> None:
    log_file = tmp_path / "mcp.log"
    args = ("--log-level", "INFO", "--log-file", str(log_file))
    async with raw_mcp(tmp_path, *args) as mcp:
        params = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": f"claude\n{FORGED}", "version": "0"},
        }
        assert "result" in await mcp.reply(mcp.call("initialize", params))
        mcp.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        question = {"id": "db", "question": "Which?", "options": [{"label": "A"}]}
        arguments = {"questions": [question], "timeout": 1}
        call = mcp.call("tools/call", {"name": "ask_user_question", "arguments": arguments})
        pending = await mcp.reply(call)  # nobody answers: pending after 1 s
        assert json.loads(pending["result"]["content"][0]["text"])["pending"] is True
    assert_not_forged(log_of(tmp_path / "data", log_file), "external session")


async def test_S17_a_model_call_id_cannot_forge_a_host_log_line(tmp_path: Path) -> None:
    data, log_file = tmp_path / "data", tmp_path / "serve.log"
    question = {"id": "db", "question": "Which?", "options": [{"label": "A"}]}
    model = script(ask_call(f"call-1\n{FORGED}", [question]), text_step("done"))
    args = ["--log-file", str(log_file), "--log-level", "INFO"]
    connect = AskbridgeClient.connect(data_dir=data, model=model, ask_mode="timed", args=args)
    async with connect as client:
        client.answer_with(lambda ask: {"answers": [{"id": "db", "selected": ["A"]}]})
        session = await client.new_session()
        assert await client.prompt(session, "go") == "end_turn"
    assert_not_forged(log_of(data, log_file), "asked in session")
