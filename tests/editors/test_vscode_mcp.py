"""An MCP agent asks through the real VS Code (the intents tested in the real
editor with questions that arrive through `askbridge mcp`; X1–X5, M1, M3).

The agent is the official `mcp` SDK client (tests/mcp/sdk_client.py) on a real
`askbridge mcp`; the editor is code-server in headless Chromium with the
packaged extension, its `askbridge.dataDir` the same data directory, so both
attach to one host. The window opens no session: it follows the agent's
external session by itself. editors/vscode/e2e/mcp.mjs answers each card as
it comes; this test makes one tool call at a time and checks what the agent
gets:

1. ask_user_question asked before the editor starts (M3): the card shows once
   the window is up; the answer is the tool result (X2), with progress
   notifications meanwhile;
2. approval_prompt for a Bash command, Allow → `{"behavior":"allow",
   "updatedInput":…}`; another, Deny → deny with "The user denied this Bash
   call." (X5, the approval card: subject, command beside, Allow / Deny only);
3. approval_prompt for ExitPlanMode, Approve plan → allow; again, feedback →
   deny with the user's words (the plan-review card);
4. ask_user_question with a 5 s timeout: it runs out in the window (pending,
   X2); answered late from the tree view, it reaches the agent through
   get_answers (X4).

No code-server, front door or host outlives the test.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from test_vscode_editor import (
    ARTIFACTS,
    ASKBRIDGE_BIN,
    REPO,
    VSCODE,
    end_code_server,
    packaged_vsix,
)

from askbridge.testing.hosts import stop_host

sys.path.insert(0, str(REPO / "tests" / "mcp"))  # the mcp SDK client helper of tests/mcp
from sdk_client import QUESTION, mcp_session, text

AGENT = "sdk-e2e"
FEEDBACK = "keep the cache, only remove build"
BASH_ALLOWED = {"command": "rm -rf build", "description": "Clean the build"}
BASH_DENIED = {"command": "git push --force"}
PLAN = "# Clean up\n\n1. remove the build directory\n2. backfill the cache"
PLAN_AGAIN = "# Clean up, again\n\n1. remove the build directory\n2. keep the cache"
LINT = {
    "id": "lint",
    "header": "Lint",
    "question": "Add a linter?",
    "options": [{"label": "Yes"}, {"label": "No"}],
}
FIRST_CARD_S = 240  # code-server and the extension start first
CARD_S = 120


def _result(result: Any) -> Any:
    assert result.is_error is False, text(result)
    return json.loads(text(result))


class FirstAsk:
    """The ask made before any editor runs: in the background, `asked` once it is logged and
    open (its first progress notification, X2), `done` with its result."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.asked, self.done = anyio.Event(), anyio.Event()
        self.progress: list[str] = []
        self.result: Any = None

    async def run(self) -> None:
        args = {"questions": [QUESTION], "timeout": 600}
        self.result = await self.agent.call_tool(
            "ask_user_question", args, progress_callback=self._on_progress
        )
        self.done.set()

    async def _on_progress(self, value: float, total: float | None, message: str | None) -> None:
        self.progress.append(message or "")
        self.asked.set()


async def _agent_and_editor(tmp_path: Path, vsix: Path, work: Path) -> tuple[list[Any], str]:
    """The agent's results, while e2e/mcp.mjs answers in the editor; and mcp.mjs's stdout."""
    node_out, node_err = tmp_path / "node-stdout.log", tmp_path / "node-stderr.log"
    command = [
        *("node", "e2e/mcp.mjs", "--vsix", str(vsix), "--askbridge", str(ASKBRIDGE_BIN)),
        *("--data-dir", str(tmp_path / "data"), "--feedback", FEEDBACK),
        *("--artifacts", str(ARTIFACTS), "--work", str(work)),
    ]
    seen: list[Any] = []
    async with mcp_session(tmp_path, name=AGENT) as agent, anyio.create_task_group() as tg:
        first = FirstAsk(agent)
        tg.start_soon(first.run)
        with anyio.fail_after(30):
            await first.asked.wait()  # M3: open before the editor starts
        with node_out.open("wb") as out, node_err.open("wb") as err:
            node = await anyio.open_process(command, stdout=out, stderr=err, cwd=VSCODE)

        async def watch_node() -> None:
            if await node.wait() != 0:
                tg.cancel_scope.cancel()  # the editor failed: stop waiting for its answers

        tg.start_soon(watch_node)
        try:
            await _agent_steps(agent, first, seen)
            with anyio.fail_after(CARD_S):
                await node.wait()
        finally:
            if node.returncode is None:  # this side failed first: the editor goes too
                node.kill()
                with anyio.CancelScope(shield=True):
                    await node.wait()
        tg.cancel_scope.cancel()
    if node.returncode != 0:
        log = node_err.read_text(errors="replace")
        raise AssertionError(f"e2e/mcp.mjs exited {node.returncode}:\n{log[-8000:]}")
    return seen, node_out.read_text()


async def _agent_steps(agent: Any, first: FirstAsk, seen: list[Any]) -> None:
    """One call at a time, each answered in the editor before the next (mcp.mjs's order)."""

    async def call(name: str, args: dict[str, Any]) -> Any:
        with anyio.fail_after(CARD_S):
            return _result(await agent.call_tool(name, args))

    with anyio.fail_after(FIRST_CARD_S):
        await first.done.wait()
    seen += [_result(first.result), first.progress[0]]
    for tool_input in (BASH_ALLOWED, BASH_DENIED):
        seen.append(await call("approval_prompt", {"tool_name": "Bash", "input": tool_input}))
    for plan in (PLAN, PLAN_AGAIN):
        args = {"tool_name": "ExitPlanMode", "input": {"plan": plan}}
        seen.append(await call("approval_prompt", args))
    seen.append(await call("ask_user_question", {"questions": [LINT], "timeout": 5}))
    for _ in range(CARD_S * 2):  # answered late in the editor; an agent polls get_answers (X4)
        got = await call("get_answers", {})
        if got["answers"]:
            break
        await anyio.sleep(0.5)
    seen.append(got)


@pytest.mark.timeout(3600)
def test_vscode_real_editor_answers_an_mcp_agent_X1_X2_X4_X5_M3(tmp_path: Path) -> None:
    vsix = packaged_vsix()
    work = tmp_path / "work"
    try:
        seen, out = anyio.run(_agent_and_editor, tmp_path, vsix, work)
    finally:
        end_code_server(work)
        stop_host(tmp_path / "data")
    report = json.loads(out.strip().splitlines()[-1])
    assert report["ok"] is True, report

    first, progress, allowed, denied, approved, feedback, pending, late = seen
    assert first == {"answers": [{"id": "db", "selected": ["Postgres"]}]}  # M3, X2
    assert progress.startswith("waiting for the user's answer"), progress
    assert report["firstTitle"].startswith("Setup · ")  # the window claimed it (C3)

    # X5: the approval card and what it decides.
    assert report["approvalRows"] == ["Allow", "Deny"]  # nothing else: no Other…
    assert report["approvalPlaceholder"] == "Allow Bash?"
    assert report["approvalHeading"] == "Bash: Allow Bash?"
    assert report["command"] == "rm -rf build"  # the shell block, rendered
    assert report["deniedCommand"] == "git push --force"
    assert allowed == {"behavior": "allow", "updatedInput": BASH_ALLOWED}
    assert denied == {"behavior": "deny", "message": "The user denied this Bash call."}

    # X5: the plan-review card: Approve plan allows, feedback denies with the user's words.
    assert report["planRows"] == ["Approve plan", "Keep planning", "Give feedback…"]
    assert report["planHeading"] == "Clean up"
    assert approved == {"behavior": "allow", "updatedInput": {"plan": PLAN}}
    assert feedback == {"behavior": "deny", "message": FEEDBACK}

    # X2/X4: pending in the agent, answered late in the editor, delivered by get_answers.
    assert pending["pending"] is True and "get_answers" in pending["message"]
    assert report["sessionName"] == f"{AGENT} — {tmp_path}"  # X1's title names the session
    assert report["sent"] == "askbridge: your answer was sent to the agent."
    assert late == {
        "answers": [
            {
                "callId": pending["callId"],
                "questions": [LINT],
                "answers": [{"id": "lint", "selected": ["Yes"]}],
            }
        ],
        "pending": [],
    }
