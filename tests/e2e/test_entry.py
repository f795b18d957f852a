"""The `askbridge` console script's plain front door (server/askbridge/entry.py).

What an editor runs, `askbridge serve --data-dir D`, attaches without building
the full command line; every other command line goes through the full parser.
The e2e test runs the installed console script itself, in both host modes
(ASKBRIDGE_HOST, tests/conftest.py): inline it takes the full path.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from askbridge import __version__
from askbridge.entry import plain_front_door
from askbridge.testing.hosts import host_status

CONSOLE_SCRIPT = Path(sys.executable).parent / "askbridge"


@pytest.mark.parametrize(
    ("argv", "plain"),
    [
        (["serve"], ("lsp", None)),
        (["serve", "--data-dir", "d"], ("lsp", "d")),
        (["acp", "--data-dir=d", "--host", "auto"], ("acp", "d")),
        (["mcp", "--host=auto"], ("mcp", None)),
        (["serve", "--host", "inline"], None),
        (["serve", "--host", "bogus"], None),  # the parser says what is accepted
        (["serve", "--data-dir"], None),
        (["serve", "--data-dir", "--host"], None),
        (["serve", "--model", "{}"], None),
        (["serve", "--help"], None),
        (["serve", "--ask-timeout", "5"], None),
        (["host", "--data-dir", "d"], None),
        (["sessions"], None),
        ([], None),
    ],
)
def test_plain_front_door_only_for_what_needs_no_parser(
    argv: list[str], plain: tuple[str, str | None] | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ASKBRIDGE_HOST", raising=False)
    assert plain_front_door(argv, stdin_is_terminal=False) == plain


def test_plain_front_door_keeps_the_inline_default_and_the_terminal_hint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert plain_front_door(["serve"], stdin_is_terminal=True) is None
    monkeypatch.setenv("ASKBRIDGE_HOST", "inline")
    assert plain_front_door(["serve"], stdin_is_terminal=False) is None
    assert plain_front_door(["serve", "--host", "auto"], stdin_is_terminal=False) == ("lsp", None)


def _frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


@pytest.mark.skipif(not os.access(CONSOLE_SCRIPT, os.X_OK), reason="no console script")
def test_the_console_script_serves_an_editor(tmp_path: Path) -> None:
    data = tmp_path / "data"
    frames = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}},
        {"jsonrpc": "2.0", "id": 2, "method": "shutdown"},
        {"jsonrpc": "2.0", "method": "exit"},
    ]
    done = subprocess.run(
        [str(CONSOLE_SCRIPT), "serve", "--data-dir", str(data)],
        input=b"".join(_frame(f) for f in frames),
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    header, _, rest = done.stdout.partition(b"\r\n\r\n")
    length = int(header.split(b":")[1])
    reply = json.loads(rest[:length])
    assert reply["id"] == 1
    assert reply["result"]["serverInfo"] == {"name": "askbridge", "version": __version__}
    status = host_status(data)
    if os.environ.get("ASKBRIDGE_HOST") == "inline":
        assert status is None  # the front door was the host, and it is gone
    else:
        assert status is not None and status["version"] == __version__
