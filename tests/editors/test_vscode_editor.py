"""The VS Code extension in a real editor: code-server 4.100.3 in Debian's Chromium.

Installs everything it needs (scripts/install.sh, scripts/install-e2e.sh:
apt chromium/libkrb5-dev/ripgrep when missing, npm for the extension and for
code-server + playwright-core), packages the extension as a .vsix (vsce),
stores a session with a continued question (the project's test client on the
real `askbridge serve`), and runs editors/vscode/e2e/run.mjs. The server is
started from the extension's settings alone: `askbridge` found on PATH,
askbridge.model (a script), askbridge.askMode/askTimeout, and askbridge.env's
XDG_STATE_HOME choosing the default data directory. In the editor: a
multi-select question is answered with two options and "Other…"; a 5 s timed
question runs out and is answered late from the status bar item; a question
withdrawn by the server while on screen closes with a notification; "Open
Session…" opens the stored session and its continued question is answered
from the tree view; a command that is not installed gives one notification.
The server's log, read back from the data dir after the editor is gone, must
hold all of it.

The approval and plan-review cards (V3 intents, which a script model cannot
send) are checked in the editor with the server side played by
tests/editors/transcript_player.py (editors/vscode/e2e/intents.mjs), from a
transcript made here out of blocking-ask.json. Screenshots land in
test-artifacts/.

A tool that cannot be installed fails the test; nothing here skips.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from askbridge.testing import AskbridgeClient
from askbridge.testing.hosts import stop_host
from shared_work import once_per_run
from stored_logs import read_logs

REPO = Path(__file__).resolve().parents[2]
VSCODE = REPO / "editors" / "vscode"
ARTIFACTS = REPO / "test-artifacts"
ASKBRIDGE_BIN = Path(sys.executable).with_name("askbridge")
EXPECTED_ANSWER = {
    "answers": [{"id": "langs", "selected": ["Python (Recommended)", "Rust"], "custom": "Zig"}]
}
STORED_QUESTION = {
    "id": "editor",
    "header": "Stored",
    "question": "Which editor do you use?",
    "options": [{"label": "VS Code"}, {"label": "Neovim"}],
}
STORED_STEPS = [
    {
        "toolCalls": [
            {
                "id": "call-stored",
                "name": "ask_user_question",
                "arguments": {"questions": [STORED_QUESTION], "timeout": 1},
            }
        ]
    },
    {"text": "No answer yet; carrying on."},
    {"text": "Got the answer to the stored question."},
]


def _run(cmd: list[str], timeout: float) -> str:
    proc = subprocess.run(
        cmd, cwd=VSCODE, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{' '.join(cmd)} exited {proc.returncode}:\n{output[-8000:]}"
    return proc.stdout


def built_extension() -> Path:
    """The extension's npm packages, compiled out/ (its node tests too) and dist/askbridge.vsix,
    made once per test run (package.sh starts with `rm -rf out dist`: run again while another
    worker's test uses them, it would pull them away)."""
    once_per_run("vscode-extension", lambda: _run(["bash", "scripts/package.sh"], timeout=900))
    vsix = VSCODE / "dist" / "askbridge.vsix"
    assert vsix.is_file(), vsix
    return vsix


def packaged_vsix() -> Path:
    """Install the extension's and the editor's packages (idempotent) and package the .vsix."""
    once_per_run("vscode-editor", lambda: _run(["bash", "scripts/install-e2e.sh"], timeout=2400))
    return built_extension()


def end_code_server(work: Path) -> None:
    """Kill the code-server process group an e2e script left behind (editor.mjs writes its pid
    to `<work>/code-server.pid` and removes it when it closed the editor itself)."""
    try:
        pid = int((work / "code-server.pid").read_text())
    except (OSError, ValueError):
        return
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def run_e2e(
    script: str, *args: str, work: Path, timeout: float, data_dirs: tuple[Path, ...] = ()
) -> dict[str, Any]:
    """`node e2e/<script> … --work WORK`; its report (the last stdout line, JSON). Whatever
    happens, no code-server and no host of `data_dirs` outlives it: the extension's servers
    attach to a host started detached (H2), which would idle on for a minute."""
    try:
        out = _run(["node", f"e2e/{script}", *args, "--work", str(work)], timeout=timeout)
    finally:
        end_code_server(work)
        for data_dir in data_dirs:
            stop_host(data_dir)
    report: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    assert report["ok"] is True, report
    return report


def _store_a_session_with_a_continued_question(data_dir: Path) -> str:
    """A session whose timed question ran out unanswered (continued, V7), left in `data_dir`."""

    async def store() -> str:
        model = {"kind": "script", "steps": STORED_STEPS}
        async with AskbridgeClient.connect(data_dir=data_dir, model=model, ask_mode="timed") as c:
            session_id = await c.new_session()
            assert await c.prompt(session_id, "Ask me something") == "end_turn"
            view = await c.view(session_id)
            assert [(e["callId"], e["state"]) for e in view["active"]] == [
                ("call-stored", "continued")
            ]
            return session_id

    return anyio.run(store)


def stored_sessions(data_dir: Path) -> dict[str, list[dict[str, Any]]]:
    """Every session's log, read-only (the host is stopped by then, but need not be)."""
    return read_logs(data_dir)


def _turns(events: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    return [
        (e["type"], e.get("cause") or e.get("stopReason"))
        for e in events
        if e["type"] in ("turn/start", "turn/end")
    ]


def _late_replies(events: list[dict[str, Any]], call_id: str) -> list[dict[str, Any]]:
    return [
        e
        for e in events
        if e["type"] == "user/message" and (e.get("source") or {}).get("callId") == call_id
    ]


@pytest.mark.timeout(3600)
def test_vscode_real_editor_questions_sessions_and_settings_V4_TW7_L4_A9_M1(tmp_path: Path) -> None:
    """V4, TW7, L4, A9, M1 and the settings in code-server.

    V4: the real QuickPick's checked options and the "Other…" text reach the log
    as `{selected, custom}`. TW7/V7/L4: a 5 s question's countdown runs out, the
    question shows in the status bar item and tree view, and answering it there
    queues a user message that starts an inbox turn. A9: a card the server
    withdraws closes and says so. M1: "Open Session…" subscribes this window to
    a stored session, whose continued question is answered here. Settings:
    model, ask mode and timeout are in the session header, askbridge.env's
    XDG_STATE_HOME put the data where the server's default says.
    """
    vsix = packaged_vsix()
    state_home = tmp_path / "state"
    data_dir = state_home / "askbridge"  # the server's default under askbridge.env's XDG_STATE_HOME
    stored = _store_a_session_with_a_continued_question(data_dir)
    # Only this test's own screenshot: the other editor tests write theirs beside it, maybe
    # at this moment (the suite runs in parallel); each run overwrites its files anyway.
    shot = ARTIFACTS / "vscode-quickpick.png"
    shot.unlink(missing_ok=True)

    report = run_e2e(
        "run.mjs",
        *("--vsix", str(vsix), "--askbridge", str(ASKBRIDGE_BIN)),
        *("--state-home", str(state_home), "--stored-session", stored),
        *("--artifacts", str(ARTIFACTS)),
        work=tmp_path / "work",
        timeout=400,
        data_dirs=(data_dir,),
    )
    # The claim's countdown is visible in the real QuickPick's title (C3).
    assert re.fullmatch(r"Stack · \d+s left", report["title"]), report["title"]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    sessions = stored_sessions(data_dir)
    assert len(sessions) == 2, list(sessions)
    [editor_session] = [sid for sid in sessions if sid != stored]
    events = sessions[editor_session]
    # askbridge.model, askMode and askTimeout reached the server.
    header = events[0]
    assert header["type"] == "session/header"
    assert header["model"]["kind"] == "script"
    assert header["model"]["steps"][0]["toolCalls"][0]["id"] == "call-e2e"
    assert header["askUserQuestion"] == {"mode": "timed", "timeout": 600}

    results = [e for e in events if e["type"] == "tool/result" and e["callId"] == "call-e2e"]
    assert len(results) == 1, events
    assert results[0]["isError"] is False
    assert json.loads(results[0]["content"]) == EXPECTED_ANSWER

    # The second question's 5 s countdown ran out in the editor: ASK_TIMED_OUT → pending (TW7).
    assert re.fullmatch(r"Setup · \d+s left", report["lateTitle"]), report["lateTitle"]
    late = [e for e in events if e["type"] == "tool/result" and e["callId"] == "call-late"]
    assert len(late) == 1, events
    assert json.loads(late[0]["content"])["pending"] is True
    # Answered late from the status bar item: queued and admitted as a user message (L4).
    [reply] = _late_replies(events, "call-late")
    assert reply["source"]["kind"] == "user-question-reply"
    body = json.loads(reply["content"][0]["text"])
    assert body["answers"] == [{"id": "db", "selected": ["SQLite"]}]

    # A9: the turn was cancelled while the third card was on screen; the card said so.
    withdrawn = [
        e for e in events if e["type"] == "tool/result" and e["callId"] == "call-withdrawn"
    ]
    assert [e["error"]["code"] for e in withdrawn] == ["ASK_ABORTED"], events
    assert report["withdrawn"] == (
        'askbridge: "Deploy: Deploy to production now?" was closed: the agent no longer needs '
        "this answer (the turn was cancelled, or the question was dismissed in another window)."
    )
    assert _turns(events) == [
        ("turn/start", "prompt"),
        ("turn/end", "end_turn"),
        ("turn/start", "prompt"),
        ("turn/end", "end_turn"),
        ("turn/start", "inbox"),
        ("turn/end", "end_turn"),
        ("turn/start", "prompt"),
        ("turn/end", "cancelled"),
    ], _turns(events)

    # M1: the stored session, opened in the editor, got its late answer from there.
    assert report["opened"] == f"askbridge: opened session {stored}: 1 question waiting."
    stored_events = sessions[stored]
    [stored_reply] = _late_replies(stored_events, "call-stored")
    body = json.loads(stored_reply["content"][0]["text"])
    assert body["answers"] == [{"id": "editor", "selected": ["VS Code"]}]
    assert _turns(stored_events)[-2:] == [("turn/start", "inbox"), ("turn/end", "end_turn")]

    # A program that is not installed: one notification naming the setting to change.
    assert report["launchProblems"] == 1, report
    assert report["notFound"].startswith(
        'askbridge: cannot start the server: "askbridge-not-installed" was not found on PATH'
    ), report["notFound"]
    assert "askbridge.command" in report["notFound"]


# A command holding a backtick run and a line that would close a shorter fence: the server
# fences it with four backticks (S17), and the editor's renderer must keep it one code block.
COMMAND = "cat <<'EOF'\n```\n[not a link](http://evil.example)\nEOF"
BASH_APPROVAL = {
    "id": "approval",
    "question": "Allow Bash?",
    "detail": f"````bash\n{COMMAND}\n````",
    "options": [{"label": "Allow"}, {"label": "Deny"}],
    "intent": {
        "kind": "approval",
        "approve": "Allow",
        "reject": "Deny",
        "subject": {"name": "Bash"},
    },
}
PLAN_REVIEW = {
    "id": "plan",
    "header": "Plan",
    "question": "Go ahead with this plan?",
    "detail": (
        "# Clean up\n\n1. remove the build directory\n2. backfill the cache\n"
        '3. <span style="display:none">drop the database</span>\n'
        "4. <!-- rotate the keys -->\n"
        "5. <details><summary>tidy up</summary>wipe the backups</details>"
    ),
    "options": [{"label": "Keep planning"}, {"label": "Approve plan"}],
    "intent": {"kind": "plan-review", "approve": "Approve plan"},
}
FEEDBACK = "keep the cache, only remove build"


def _intent_transcript(path: Path) -> None:
    """blocking-ask.json with its one ask replaced by an approval and a plan review (X5 shapes).

    The player plays the server's side; a script model cannot send intents, so the
    asks are what `askbridge mcp`'s approval_prompt sends (behavior.md X5), each
    followed by the reply the editor must send.
    """
    raw = json.loads((REPO / "protocol" / "transcripts" / "blocking-ask.json").read_text())
    messages = raw["messages"]
    [at] = [i for i, m in enumerate(messages) if m["message"].get("method") == "userQuestions/ask"]
    ask = messages[at]["message"]

    def exchange(ask_id: str, question: dict[str, Any], answer: dict[str, Any]) -> list[Any]:
        params = {**ask["params"], "questions": [question]}
        reply = {"jsonrpc": "2.0", "id": ask_id, "result": {"answers": [answer]}}
        return [
            {"from": "server", "message": {**ask, "id": ask_id, "params": params}},
            {"from": "client", "message": reply},
        ]

    messages[at : at + 2] = [
        *exchange("$approvalId", BASH_APPROVAL, {"id": "approval", "selected": ["Allow"]}),
        *exchange("$planId", PLAN_REVIEW, {"id": "plan", "selected": [], "custom": FEEDBACK}),
    ]
    path.write_text(json.dumps(raw))


@pytest.mark.timeout(3600)
def test_vscode_real_editor_approval_and_plan_review_cards_V3_V4_S17(tmp_path: Path) -> None:
    """V3 approval and plan-review cards rendered in code-server, V4 feedback as custom.

    S17: a command fenced longer than its backtick runs stays one code block, whole;
    the plan's raw HTML (an inline style, a comment, a collapsed <details>) is shown as
    text and cannot hide a step.

    The approval card holds only Allow / Deny under the subject, with the shell
    block rendered beside it; the plan is rendered beside Approve plan (first) /
    Keep planning / Give feedback…, and the feedback goes back as `custom`. The
    transcript player checks the replies exactly.
    """
    vsix = packaged_vsix()
    transcript, report_file = tmp_path / "intents.json", tmp_path / "player-report.json"
    _intent_transcript(transcript)
    player = [
        sys.executable,
        str(REPO / "tests" / "editors" / "transcript_player.py"),
        str(transcript),
        "--report",
        str(report_file),
    ]
    seen = run_e2e(
        "intents.mjs",
        *("--vsix", str(vsix), "--player-command", json.dumps(player)),
        *("--player-report", str(report_file)),
        *("--feedback", FEEDBACK, "--artifacts", str(ARTIFACTS)),
        work=tmp_path / "work",
        timeout=300,
    )
    assert seen["approvalRows"] == ["Allow", "Deny"], seen  # nothing else: no Other…
    assert seen["approvalPlaceholder"] == "Allow Bash?"
    assert seen["approvalHeading"] == "Bash: Allow Bash?"
    assert seen["command"] == COMMAND  # the shell block, whole, rendered (no fences): S17
    assert seen["planRows"] == ["Approve plan", "Keep planning", "Give feedback…"], seen
    assert seen["planHeading"] == "Clean up"
    # The agent's raw HTML cannot hide a step of the plan it asks to approve (S17).
    # Raw HTML is shown as text: no comment, collapsed <details> or hidden span keeps a step
    # out of sight.
    for step in ("drop the database", "<!-- rotate the keys -->", "wipe the backups"):
        assert step in seen["planText"], seen["planText"]
    report = json.loads(report_file.read_text())
    assert report["ok"], report["problem"]
    replies = [
        e["message"]
        for e in report["exchange"]
        if e["from"] == "client"
        and "result" in e["message"]
        and "answers" in e["message"]["result"]
    ]
    assert [r["result"] for r in replies] == [
        {"answers": [{"id": "approval", "selected": ["Allow"]}]},
        {"answers": [{"id": "plan", "selected": [], "custom": FEEDBACK}]},
    ]
