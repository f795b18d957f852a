"""Several VS Code windows on one data directory, in the real editor (H2, H7, M1–M3).

One code-server with two windows (editors/vscode/e2e/windows.mjs says why one
code-server): each window's extension host runs its own `askbridge serve`,
and both attach to the data directory's one `askbridge host`. Before the
windows start, a host that says it is another version holds the data
directory (editors/vscode/test/other_version_host.py): the first window's
start is refused, its error notification is the server's one line, and the
command that line names stops that host so "Restart Server" works. Then a
question shows in both windows, the first answer wins, the other window's
card closes saying it was answered in another window, and the model got the
first answer (read back from the store). Screenshots land in test-artifacts/.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_vscode_editor import (
    ARTIFACTS,
    ASKBRIDGE_BIN,
    VSCODE,
    packaged_vsix,
    run_e2e,
    stored_sessions,
)

from askbridge import __version__
from askbridge.testing.hosts import host_status, stop_host

OTHER_VERSION_HOST = VSCODE / "test" / "other_version_host.py"


def _other_version_host(data_dir: Path) -> subprocess.Popen[bytes]:
    host = subprocess.Popen([sys.executable, str(OTHER_VERSION_HOST), str(data_dir)])
    deadline = time.monotonic() + 20
    while (status := host_status(data_dir)) is None or status.get("version") != "0.0.0-other":
        assert host.poll() is None and time.monotonic() < deadline, "the other version's host"
        time.sleep(0.1)
    return host


def _results(events: list[dict[str, object]], call_id: str) -> list[object]:
    return [
        json.loads(str(e["content"]))
        for e in events
        if e["type"] == "tool/result" and e["callId"] == call_id
    ]


@pytest.mark.timeout(3600)
def test_vscode_two_windows_one_host_H2_H7_M1_M2_M3(tmp_path: Path) -> None:
    """H7: the refusal's line is the notification and its command fixes it. H2/M1/M3: a
    window that opens the session while its question is open gets the card. M2: the first
    answer wins; the other window's card closes with "answered in another window"."""
    vsix = packaged_vsix()
    data_dir = tmp_path / "data"
    other = _other_version_host(data_dir)
    try:
        report = run_e2e(
            "windows.mjs",
            *("--vsix", str(vsix), "--askbridge", str(ASKBRIDGE_BIN)),
            *("--data-dir", str(data_dir), "--artifacts", str(ARTIFACTS)),
            work=tmp_path / "work",
            timeout=600,
            data_dirs=(data_dir,),
        )
        assert other.wait(timeout=10) == 0  # stopped by the command the line names
    finally:
        if other.poll() is None:
            other.kill()
            other.wait()
        stop_host(data_dir)

    # H7: the window shows the server's own line, door name and all.
    line = (
        f"the askbridge host of {data_dir} (pid {other.pid}) is version 0.0.0-other, this front "
        f"door is {__version__}; stop it with `askbridge host --stop --data-dir {data_dir}` and "
        "start again"
    )
    refused = report["refused"]
    assert re.fullmatch(
        r"askbridge: the server did not start\. askbridge (serve|lsp): " + re.escape(line), refused
    ), refused
    # Ours, and at most vscode-languageclient's own "couldn't create connection": no restart loop.
    assert report["startProblems"] <= 2, report
    assert report["stopped"] == f"stopped the askbridge host (pid {other.pid})"

    assert report["listed"] == 1  # Open Session… lists the one session A made
    assert report["opened"].endswith(": 1 question waiting."), report["opened"]
    assert report["answeredInB"] == (
        'askbridge: "Setup: Which database?" was answered in another window; its card here was '
        "closed."
    )
    assert report["answeredInA"] == (
        'askbridge: "CI: Run the tests on every push?" was answered in another window; its card '
        "here was closed."
    )

    [(session_id, events)] = stored_sessions(data_dir).items()
    assert report["opened"].startswith(f"askbridge: opened session {session_id}")
    # The model got the first answer, once: B's for the first question, A's for the second.
    assert _results(events, "call-first") == [{"answers": [{"id": "db", "selected": ["Postgres"]}]}]
    assert _results(events, "call-second") == [{"answers": [{"id": "ci", "selected": ["Yes"]}]}]
