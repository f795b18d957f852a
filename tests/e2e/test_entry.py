"""The `askbridge` console script's plain front door (server/askbridge/cli/entry.py).

What an editor runs, `askbridge serve --data-dir D`, attaches without building
the full command line, and `--host inline` (what the harnesses run) becomes the
inline host without it; every other command line goes through the full parser.
The e2e tests run the installed console script itself, in both host modes
(ASKBRIDGE_HOST, tests/conftest.py), and the inline refusals through the console
script and `python -m askbridge.cli` (the full parser) alike.
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
from askbridge.cli.entry import plain_command_line, plain_front_door
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


@pytest.mark.parametrize(
    ("argv", "plain"),
    [
        (["serve", "--host", "inline"], ("lsp", None, "inline")),
        (["acp", "--data-dir=d", "--host=inline"], ("acp", "d", "inline")),
        (["mcp", "--host", "auto", "--data-dir", "d"], ("mcp", "d", "auto")),
        (["serve", "--host", "inline", "--log-level", "DEBUG"], None),
        (["serve", "--host", "inline", "--model", "{}"], None),
    ],
)
def test_plain_command_line_takes_the_inline_host_too(
    argv: list[str], plain: tuple[str, str | None, str] | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ASKBRIDGE_HOST", raising=False)
    assert plain_command_line(argv, stdin_is_terminal=False) == plain
    assert plain_command_line(argv, stdin_is_terminal=True) is None  # the hint (cli/commands.py)
    monkeypatch.setenv("ASKBRIDGE_HOST", "inline")
    assert plain_command_line(["serve"], stdin_is_terminal=False) == ("lsp", None, "inline")


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


INITIALIZE = _frame(
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}
)
PROGRAMS = {
    "console-script": [str(CONSOLE_SCRIPT)],
    "module": [sys.executable, "-m", "askbridge.cli"],
}


def _refused_before_any_reply(program: str, data: Path) -> bytes:
    """`serve --host inline` on `data` with an `initialize` waiting: exit 1, nothing on
    stdout (lsp/early.py answers only once the data directory is open); its stderr."""
    done = subprocess.run(
        [*PROGRAMS[program], "serve", "--data-dir", str(data), "--host", "inline"],
        input=INITIALIZE,
        capture_output=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout) == (1, b""), done
    assert done.stderr.count(b"\n") == 1, done.stderr
    return done.stderr


@pytest.mark.skipif(not os.access(CONSOLE_SCRIPT, os.X_OK), reason="no console script")
@pytest.mark.inline_only  # the inline host's own refusal; auto attaches to the holder (H2)
@pytest.mark.parametrize("program", list(PROGRAMS))
def test_H3_a_data_dir_held_since_initialize_was_answered_is_refused_before_any_reply(
    tmp_path: Path, program: str
) -> None:
    """H3: once the inline host answered `initialize`, its data directory is held; another
    inline host there names the holder and answers nothing."""
    data = tmp_path / "data"
    holder = subprocess.Popen(
        [str(CONSOLE_SCRIPT), "serve", "--data-dir", str(data), "--host", "inline"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert holder.stdin is not None and holder.stdout is not None
        holder.stdin.write(INITIALIZE)
        holder.stdin.flush()
        assert b'"result"' in holder.stdout.read1()  # answered: the lock is taken
        stderr = _refused_before_any_reply(program, data)
    finally:
        if holder.stdin is not None:
            holder.stdin.close()  # end of input: the holder exits 0
        assert holder.wait(timeout=30) == 0
        if holder.stdout is not None:
            holder.stdout.close()
    assert stderr.startswith(f"askbridge: data directory {data} is in use by process ".encode())


@pytest.mark.skipif(not os.access(CONSOLE_SCRIPT, os.X_OK), reason="no console script")
@pytest.mark.inline_only  # the inline host's own check; auto's host logs it (H2)
@pytest.mark.parametrize("program", list(PROGRAMS))
def test_S5_a_data_dir_others_may_write_is_refused_before_any_reply(
    tmp_path: Path, program: str
) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    data.chmod(0o777)
    stderr = _refused_before_any_reply(program, data)
    assert stderr.startswith(f"askbridge: data directory {data} ".encode()), stderr


FIRST_LINES = {  # the newline-delimited doors' initialize
    "acp": {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
    "mcp": {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test_entry", "version": "1"},
        },
    },
}


@pytest.mark.skipif(not os.access(CONSOLE_SCRIPT, os.X_OK), reason="no console script")
@pytest.mark.parametrize("door", list(FIRST_LINES))
def test_the_console_script_serves_acp_and_mcp_clients(tmp_path: Path, door: str) -> None:
    """The plain command line of the other doors, inline and attached: answered, then a
    clean end at end of input."""
    done = subprocess.run(
        [str(CONSOLE_SCRIPT), door, "--data-dir", str(tmp_path / "data")],
        input=json.dumps(FIRST_LINES[door]).encode() + b"\n",
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout.splitlines()[0])
    assert reply["id"] == 1 and "result" in reply, reply
