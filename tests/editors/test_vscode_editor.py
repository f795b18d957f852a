"""The VS Code extension in a real editor: code-server 4.100.3 in Debian's Chromium.

Installs everything it needs (scripts/install.sh, scripts/install-e2e.sh:
apt chromium/libkrb5-dev/ripgrep when missing, npm for the extension and for
code-server + playwright-core), packages the extension as a .vsix (vsce),
and runs editors/vscode/e2e/run.mjs: a script session asks a multi-select
question, the test checks two options and "Other…" in the real QuickPick and
types "Zig"; then a 5 s timed question runs out and is answered late from the
status bar item. The server must then have logged the answer (V4: selected
labels plus custom) as the tool result and the late reply as a user message,
read back from its data dir after the editor is gone. Screenshots land in
test-artifacts/.

A tool that cannot be installed fails the test; nothing here skips.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from askbridge.host.datadir import open_store
from askbridge.host.store_api import StoreError

REPO = Path(__file__).resolve().parents[2]
VSCODE = REPO / "editors" / "vscode"
ARTIFACTS = REPO / "test-artifacts"
ASKBRIDGE_BIN = Path(sys.executable).with_name("askbridge")
EXPECTED_ANSWER = {
    "answers": [{"id": "langs", "selected": ["Python (Recommended)", "Rust"], "custom": "Zig"}]
}


def _run(cmd: list[str], timeout: float) -> str:
    proc = subprocess.run(
        cmd, cwd=VSCODE, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{' '.join(cmd)} exited {proc.returncode}:\n{output[-8000:]}"
    return proc.stdout


def _events_of_only_session(data_dir: Path) -> list[dict[str, Any]]:
    """The log of the one session the editor created; waits for the server to let go of the dir."""
    deadline = time.monotonic() + 20
    while True:
        try:
            store = open_store(data_dir)
            break
        except StoreError:
            # `askbridge serve` dies with code-server's process group; its lock goes with it.
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    try:
        sessions = store.list_sessions()
        assert len(sessions) == 1, sessions
        return store.load(sessions[0].session_id)
    finally:
        store.close()


@pytest.mark.timeout(3600)
def test_vscode_real_editor_multiselect_with_other(tmp_path: Path) -> None:
    """V4, TW7, L4 in code-server: multi-select + "Other…", then a continued question answered late.

    V4: the real QuickPick's checked options and the "Other…" text reach the log
    as `{selected, custom}`. TW7/V7/L4: a 5 s question's countdown runs out, the
    question shows in the status bar item and tree view, and answering it there
    queues a user message that starts an inbox turn.
    """
    _run(["bash", "scripts/install.sh"], timeout=900)
    _run(["bash", "scripts/install-e2e.sh"], timeout=2400)
    vsix = Path(_run(["bash", "scripts/package.sh"], timeout=600).strip().splitlines()[-1])
    assert vsix.is_file(), vsix
    data_dir = tmp_path / "data"
    for stale in ARTIFACTS.glob("vscode-*"):
        stale.unlink()

    out = _run(
        [
            "node",
            "e2e/run.mjs",
            "--vsix",
            str(vsix),
            "--askbridge",
            str(ASKBRIDGE_BIN),
            "--data-dir",
            str(data_dir),
            "--artifacts",
            str(ARTIFACTS),
            "--work",
            str(tmp_path / "work"),
        ],
        timeout=300,
    )
    report = json.loads(out.strip().splitlines()[-1])
    assert report["ok"] is True
    # The claim's countdown is visible in the real QuickPick's title (C3).
    assert re.fullmatch(r"Stack · \d+s left", report["title"]), report["title"]
    shot = ARTIFACTS / "vscode-quickpick.png"
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    events = _events_of_only_session(data_dir)
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
    replies = [
        e
        for e in events
        if e["type"] == "user/message" and (e.get("source") or {}).get("callId") == "call-late"
    ]
    assert len(replies) == 1, events
    assert replies[0]["source"]["kind"] == "user-question-reply"
    body = json.loads(replies[0]["content"][0]["text"])
    assert body["answers"] == [{"id": "db", "selected": ["SQLite"]}]
    turns = [
        (e["type"], e.get("cause") or e.get("stopReason"))
        for e in events
        if e["type"] in ("turn/start", "turn/end")
    ]
    assert turns == [
        ("turn/start", "prompt"),
        ("turn/end", "end_turn"),
        ("turn/start", "prompt"),
        ("turn/end", "end_turn"),
        ("turn/start", "inbox"),
        ("turn/end", "end_turn"),
    ], turns
