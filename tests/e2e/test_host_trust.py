"""S13: a front door trusts a host only after it checked it, and sends nothing before.

The attack: another local user, `nobody`, makes a "data directory" others may write
(or finds one of ours left open) and listens on its `host.sock` as an impostor host
that records whatever arrives. The victim, this
test's uid, points a front door there with a secret in its environment. The door
must refuse in one line naming the path and why, and the impostor must receive no
byte and no descriptor: no hello, no environment, no stdin/stdout. Nothing is created
inside the refused directory either (no `host.log`).

The impostor is a real process of another uid: Debian's own python3 run by
`setpriv` as nobody (the test's interpreter may live where nobody cannot read).
Every door is tried (`serve`, `acp`, `mcp`, and `web`, whose child attaches), in
both host modes: an inline door is its own host and refuses the directory as S5
says; an attaching door must refuse it before it connects.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import other_user
from askbridge.process.hostsock import MAX_SOCKET_PATH
from other_user import AS_NOBODY, ASKBRIDGE, MCP_INITIALIZE, NOBODY

shared_tmp = other_user.shared_tmp  # a fixture: a folder everyone may write in

pytestmark = [
    pytest.mark.timeout(90),
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root to become another user"),
    pytest.mark.skipif(not Path("/usr/bin/python3").exists(), reason="the impostor's python3"),
]

SECRET = "sk-S13-victims-secret-value"

# The impostor: listens on <folder>/host.sock (making the folder 0777 first with "make"),
# prints "ready", then one JSON line per connection saying what arrived on it. It plays
# along with whatever sends it a line, as a real impostor would. "sentinel" on its own
# line is the test asking "have you recorded everything before this?" (one connection
# at a time, in the order they came).
IMPOSTOR = r"""
import json, os, socket, sys
folder, make = sys.argv[1], sys.argv[2] == "make"
if make:
    os.umask(0)
    os.mkdir(folder, 0o777)
os.chdir(folder)  # a folder of any length: the address is then short
server = socket.socket(socket.AF_UNIX)
server.bind("host.sock")
os.chmod("host.sock", 0o777)
server.listen(16)
print("ready", flush=True)
while True:
    conn, _ = server.accept()
    data, fds = b"", []
    while not data.endswith(b"\n"):
        chunk, got, _flags, _addr = socket.recv_fds(conn, 65536, 16)
        fds += got
        if not chunk:
            break
        data += chunk
    for fd in fds:
        os.close(fd)
    if data == b"sentinel\n":
        print("sentinel", flush=True)
        conn.close()
        continue
    text = data.decode(errors="replace")
    print(json.dumps({"bytes": len(data), "fds": len(fds), "text": text}), flush=True)
    if data:
        conn.sendall(b'{"attached":{"hostPid":1,"version":"impostor"}}\n{"exit":0}\n')
    conn.close()
"""


class Impostor:
    """A fake host of uid nobody listening on `<folder>/host.sock`."""

    def __init__(self, folder: Path, make: bool, control: Path) -> None:
        self.folder = folder
        how = "make" if make else "use"
        self.proc = subprocess.Popen(
            [*AS_NOBODY, "/usr/bin/python3", "-I", "-c", IMPOSTOR, str(folder), how],
            stdout=subprocess.PIPE,
            text=True,
            cwd="/",
            env={"PATH": "/usr/bin:/bin"},
        )
        assert self.proc.stdout is not None
        assert self.proc.stdout.readline() == "ready\n"
        # A second name for its socket, which a door under test may unlink and rebind
        # (an inline host replaces a socket file it finds): the records stay reachable.
        self.control = control
        os.link(folder / "host.sock", control)

    def received(self) -> list[dict[str, Any]]:
        """What every connection before this call brought it."""
        with socket.socket(socket.AF_UNIX) as ask:
            ask.connect(str(self.control))
            ask.sendall(b"sentinel\n")
        records = []
        assert self.proc.stdout is not None
        while (line := self.proc.stdout.readline()) != "sentinel\n":
            assert line, "the impostor died"
            records.append(json.loads(line))
        return records

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()
        assert self.proc.stdout is not None
        self.proc.stdout.close()


@pytest.fixture
def impostors() -> Iterator[list[Impostor]]:
    started: list[Impostor] = []
    yield started
    for impostor in started:
        impostor.stop()


def door_command(door: str, data_dir: Path) -> list[str]:
    if door == "web":
        return [ASKBRIDGE, "web", "--data-dir", str(data_dir), "--listen", "127.0.0.1:0"]
    return [ASKBRIDGE, door, "--data-dir", str(data_dir)]


def run_victim(command: list[str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ASKBRIDGE_VICTIM_API_KEY": SECRET}
    return subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=60, env=env)


def assert_nothing_sent(records: list[dict[str, Any]]) -> None:
    """No byte and no descriptor reached the impostor (a bare connect is no disclosure)."""
    assert all(r["bytes"] == 0 and r["fds"] == 0 for r in records), records
    assert not any(SECRET in r["text"] for r in records)


@pytest.mark.parametrize("owner", ["nobody", "us"])
@pytest.mark.parametrize("door", ["mcp", "acp", "serve", "web"])
def test_S13_a_door_sends_nothing_into_a_data_dir_others_may_write(
    shared_tmp: Path, impostors: list[Impostor], door: str, owner: str, host_mode: str
) -> None:
    """S13: nobody's world-writable directory (or ours, left 0777) with an impostor on
    host.sock: one line naming the directory and why, nothing sent, nothing created."""
    data_dir = shared_tmp / "data"
    if owner == "us":
        data_dir.mkdir()
        os.chmod(data_dir, 0o777)
    impostor = Impostor(data_dir, make=owner == "nobody", control=shared_tmp / "control.sock")
    impostors.append(impostor)
    before = sorted(os.listdir(data_dir))

    done = run_victim(door_command(door, data_dir))

    assert_nothing_sent(impostor.received())
    assert done.returncode == 1, done
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    why = f"belongs to uid {NOBODY}" if owner == "nobody" else "is writable by group or others"
    assert f"data directory {data_dir} {why}" in lines[0]
    assert sorted(os.listdir(data_dir)) == before  # no host.log, nothing of ours


@pytest.mark.parametrize("length", ["short", "long"])
def test_S13_a_door_refuses_a_host_socket_another_uid_serves(
    shared_tmp: Path, impostors: list[Impostor], length: str, host_mode: str
) -> None:
    """S13, SO_PEERCRED: our own directory, made private (as the S5 refusal tells the user
    to) after nobody had already bound host.sock in it while it was open. An attaching
    door refuses the socket's other-uid peer before it sends a byte; an inline door is the
    host itself and replaces the socket without ever writing to it. A data dir too long
    for a socket address (H1) keeps its socket there, and the same check."""
    data_dir = shared_tmp / "data"
    if length == "long":
        data_dir = data_dir / ("d" * 60) / ("e" * 60)
        assert len(str(data_dir / "host.sock")) > MAX_SOCKET_PATH
    data_dir.mkdir(parents=True)
    os.chmod(data_dir, 0o777)
    impostor = Impostor(data_dir, make=False, control=shared_tmp / "control.sock")
    impostors.append(impostor)
    os.chmod(data_dir, 0o700)

    done = run_victim(door_command("mcp", data_dir), json.dumps(MCP_INITIALIZE) + "\n")

    assert_nothing_sent(impostor.received())
    if host_mode == "auto":
        assert done.returncode == 1, done
        lines = done.stderr.splitlines()
        assert len(lines) == 1, done.stderr
        assert f"{data_dir / 'host.sock'}" in lines[0]
        assert f"uid {NOBODY}" in lines[0]
        assert not (data_dir / "host.log").exists()
    else:
        assert done.returncode == 0, done
        assert "result" in json.loads(done.stdout.splitlines()[0]), done.stdout


VICTIM = 1001  # a non-root victim: root may write anywhere, so it never reaches this path


def test_S13_a_door_refuses_another_uids_host_in_a_data_dir_it_cannot_write(
    shared_tmp: Path, impostors: list[Impostor], host_mode: str
) -> None:
    """S13: a victim's own data dir it cannot write (0500, as after `chmod a-w`) where nobody
    had bound host.sock while it was open. Attaching writes nothing there, so the door
    asks whether a host serves it: the other-uid listener is refused in one line, before a
    byte, never as a traceback. An inline door, the host itself, cannot write there either
    and says so in one line."""
    data_dir = shared_tmp / "data"
    data_dir.mkdir()
    os.chmod(data_dir, 0o777)
    impostor = Impostor(data_dir, make=False, control=shared_tmp / "control.sock")
    impostors.append(impostor)
    os.chown(data_dir, VICTIM, VICTIM)
    os.chmod(data_dir, 0o500)
    as_victim = ["setpriv", f"--reuid={VICTIM}", f"--regid={VICTIM}", "--clear-groups"]

    done = run_victim(
        [*as_victim, *door_command("mcp", data_dir)],
        json.dumps(MCP_INITIALIZE) + "\n",
    )

    assert_nothing_sent(impostor.received())
    assert done.returncode == 1, done
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    if host_mode == "auto":
        assert f"{data_dir / 'host.sock'}" in lines[0] and f"uid {NOBODY}" in lines[0]
    else:
        assert str(data_dir) in lines[0]
