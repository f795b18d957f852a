"""stdin/stdout that asyncio cannot poll: /dev/null and regular files (askbridge.jsonrpc.stdio).

Editors start servers on pipes, but scripts and shells redirect: `askbridge serve
< /dev/null` must end (end of input, status 0) instead of hanging, and a request
file in / response file out must work like pipes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SERVE = [sys.executable, "-m", "askbridge.cli"]


@pytest.mark.parametrize("door", ["serve", "acp"])
def test_dev_null_stdin_is_end_of_input(tmp_path: Path, door: str) -> None:
    with open("/dev/null", "rb") as devnull:
        done = subprocess.run(
            [*SERVE, door, "--data-dir", str(tmp_path)],
            stdin=devnull,
            capture_output=True,
            timeout=30,
        )
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == b""


def test_requests_from_a_file_and_responses_to_a_file(tmp_path: Path) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "session/list"}).encode()
    requests = tmp_path / "requests.bin"
    requests.write_bytes(b"Content-Length: %d\r\n\r\n%b" % (len(body), body))
    responses = tmp_path / "responses.bin"
    with requests.open("rb") as stdin, responses.open("wb") as stdout:
        done = subprocess.run(
            [*SERVE, "serve", "--data-dir", str(tmp_path / "data")],
            stdin=stdin,
            stdout=stdout,
            stderr=subprocess.PIPE,
            timeout=30,
        )
    assert done.returncode == 0, done.stderr.decode()
    header, _, payload = responses.read_bytes().partition(b"\r\n\r\n")
    assert header == b"Content-Length: %d" % len(payload)
    assert json.loads(payload) == {"jsonrpc": "2.0", "id": 1, "result": {"sessions": []}}
