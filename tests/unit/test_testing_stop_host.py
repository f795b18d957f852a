"""The harness's stop_host/kill_host act on a pid only while it holds the data dir's lock.

A host killed with SIGKILL leaves `askbridge.lock` (its pid inside) and `host.sock`
behind. Pids are reused fast (32768 on this machine, thousands of processes per
test run, several workers at once): the pid in a stale lock file soon belongs to
another test's server. stop_host used to wait 10 s for that stranger and then
SIGKILL it — another test then failed for no reason of its own.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path

from askbridge.testing.hosts import holder_pid, kill_host, stop_host


def stale_data_dir(tmp_path: Path, pid: int) -> Path:
    """What a SIGKILLed host leaves: its lock file naming `pid` (unlocked) and its socket."""
    data_dir = tmp_path / "data"
    data_dir.mkdir(mode=0o700)
    (data_dir / "askbridge.lock").write_text(f"{pid}\naskbridge host\n")
    (data_dir / "host.sock").write_text("")  # a dead socket's file: connecting fails
    return data_dir


def test_a_stale_lock_naming_a_live_stranger_is_left_alone(tmp_path: Path) -> None:
    stranger = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        data_dir = stale_data_dir(tmp_path, stranger.pid)
        assert holder_pid(data_dir) is None
        started = time.monotonic()
        stop_host(data_dir)
        assert kill_host(data_dir) is None
        assert time.monotonic() - started < 2  # no 10 s wait for a process that is not a host
        assert stranger.poll() is None, "stop_host killed a process that held no lock"
    finally:
        stranger.kill()
        stranger.wait()


def test_a_held_lock_names_its_holder(tmp_path: Path) -> None:
    data_dir = stale_data_dir(tmp_path, os.getpid())
    fd = os.open(data_dir / "askbridge.lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert holder_pid(data_dir) == os.getpid()
    finally:
        os.close(fd)
    assert holder_pid(data_dir) is None
    assert holder_pid(tmp_path / "nothing") is None
