"""The MCP Inspector CLI (`@modelcontextprotocol/inspector --cli`, from npm) on `askbridge mcp`.

An independent client implementation (TypeScript SDK): it lists the tools and
calls each one against the real process (X1, X2, X4, X5). install-inspector.sh
installs the pinned version first; a failed install fails the test.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from sdk_client import ASKBRIDGE

from shared_work import once_per_run

HERE = Path(__file__).resolve().parent
INSPECTOR = HERE / "inspector" / "node_modules" / ".bin" / "mcp-inspector"

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def inspector() -> Path:
    # Under a lock, once per run: workers running this module at once would share one npm ci.
    install = ["bash", str(HERE / "install-inspector.sh")]
    once_per_run("mcp-inspector", lambda: subprocess.run(install, check=True, timeout=240))
    return INSPECTOR


def run_cli(inspector: Path, tmp_path: Path, *method: str) -> Any:
    home = tmp_path / "home"  # the Inspector keeps a catalog in ~/.mcp-inspector
    home.mkdir(exist_ok=True)
    command = [str(inspector), "--cli", ASKBRIDGE, "mcp", "--data-dir", str(tmp_path / "data")]
    done = subprocess.run(
        [*command, *method],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "HOME": str(home)},
    )
    assert done.returncode == 0, done.stderr + done.stdout
    return json.loads(done.stdout)


def test_X1_inspector_lists_the_tools(inspector: Path, tmp_path: Path) -> None:
    listed = run_cli(inspector, tmp_path, "--method", "tools/list")
    tools = {t["name"]: t for t in listed["tools"]}
    assert sorted(tools) == ["approval_prompt", "ask_user_question", "get_answers"]
    assert "timeout" in tools["ask_user_question"]["inputSchema"]["properties"]


def test_X2_X4_X5_inspector_calls_each_tool(inspector: Path, tmp_path: Path) -> None:
    question = json.dumps([{"id": "q", "question": "Ship it?", "options": [{"label": "Yes"}]}])
    asked = run_cli(
        inspector,
        tmp_path,
        *("--method", "tools/call", "--tool-name", "ask_user_question"),
        *("--tool-arg", f"questions={question}", "timeout=1"),
    )
    pending = json.loads(asked["content"][0]["text"])
    assert pending["pending"] is True and asked["structuredContent"] == pending
    answers = run_cli(inspector, tmp_path, "--method", "tools/call", "--tool-name", "get_answers")
    assert answers["structuredContent"] == {"answers": [], "pending": []}  # a new connection
    approval = run_cli(
        inspector,
        tmp_path,
        *("--method", "tools/call", "--tool-name", "approval_prompt"),
        *("--tool-arg", "tool_name=Bash", 'input={"command": "ls"}'),
    )
    decision = json.loads(approval["content"][0]["text"])
    assert decision["behavior"] == "deny"  # X5: nobody to ask, never an allow
    assert "no user-questions answerer" in decision["message"]
