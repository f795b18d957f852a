"""S5 with two real processes: `rm -rf` of a data directory under a running server.

Server A (a real `askbridge serve`) holds the data directory. The directory is
deleted; a second server B started on the same path would create a fresh
directory and lock a fresh file, so the lock file alone cannot stop it. B must
be refused while A lives (one line naming A, exit 1), A must stop acknowledging
writes (STORE_LOST), and once A is gone B starts normally on the new directory.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from askbridge.testing.wire import RawServer, serve_command

pytestmark = pytest.mark.timeout(90)


def serve_refused(data_dir: Path) -> str:
    done = subprocess.run(
        serve_command(data_dir), input=b"", capture_output=True, timeout=60, check=False
    )
    assert done.returncode == 1, done
    assert done.stdout == b""
    err = done.stderr.decode()
    assert err.count("\n") == 1, err
    return err.removeprefix("askbridge: ").strip()


def holder_of(data_dir: Path, pid: int) -> str:
    command = " ".join(serve_command(data_dir)[1:])
    return (
        f"data directory {data_dir} is in use by process {pid} "
        f"({os.path.basename(sys.executable)} {command}), which opened it before it was "
        "deleted or replaced; stop that process first"
    )


async def test_S5_after_rm_rf_a_second_server_is_refused_while_the_first_lives(
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "data"
    async with RawServer.start(data_dir) as first:
        await first.initialize()
        before = await first.call("session/new", {})
        assert "sessionId" in before.get("result", {}), before

        shutil.rmtree(data_dir)
        assert serve_refused(data_dir) == holder_of(data_dir, first.process.pid)
        # B's failed start left a fresh, private, unlocked directory behind: harmless.
        assert data_dir.is_dir()

        # A stops acknowledging: the write behind session/new fails with STORE_LOST.
        after = await first.call("session/new", {})
        assert "result" not in after, after
        assert after["error"]["code"] == -32000
        assert after["error"]["data"] == {"name": "StoreError", "code": "STORE_LOST"}
        assert "was deleted or replaced while in use" in after["error"]["message"]
        # Still refused: A is alive, even though it now knows it lost the directory.
        assert serve_refused(data_dir) == holder_of(data_dir, first.process.pid)

    async with RawServer.start(data_dir) as second:
        await second.initialize()
        listed = await second.call("session/list", {})
        assert listed["result"] == {"sessions": []}  # the new directory, not A's old one
        created = await second.call("session/new", {})
        assert "sessionId" in created["result"]
        assert await second.shutdown_and_exit() == 0


async def test_S5_a_killed_first_server_frees_the_path_at_once(tmp_path: Path) -> None:
    """The guard is a kernel object: `kill -9` of its holder frees it, no cleanup needed."""
    data_dir = tmp_path / "data"
    async with RawServer.start(data_dir) as first:
        await first.initialize()
        await first.call("session/new", {})
        shutil.rmtree(data_dir)
        assert serve_refused(data_dir) == holder_of(data_dir, first.process.pid)
        first.process.send_signal(signal.SIGKILL)
        assert await first.process.wait() == -signal.SIGKILL

    async with RawServer.start(data_dir) as second:
        await second.initialize()
        assert "sessionId" in (await second.call("session/new", {}))["result"]
        assert await second.shutdown_and_exit() == 0


def test_S5_a_plain_store_process_sees_store_lost_and_the_new_server_waits_for_it(
    tmp_path: Path,
) -> None:
    """The store's side without the host: the first process's next append raises StoreLost
    (and it exits), after which `askbridge serve` takes the re-created directory."""
    data_dir = tmp_path / "data"
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(data_dir)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdin is not None
        assert child.stdout.readline() == "ready\n"
        shutil.rmtree(data_dir)
        assert serve_refused(data_dir).startswith(
            f"data directory {data_dir} is in use by process {child.pid} ("
        )
        out, err = child.communicate(input="write\n", timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 0, err
    assert out.splitlines() == ["StoreLost STORE_LOST", "StoreLost STORE_LOST"]
    done = subprocess.run(
        serve_command(data_dir), input=b"", capture_output=True, timeout=60, check=False
    )
    assert done.returncode == 0, done


# Opens the store at argv[1], says "ready", waits for a line, then tries two writes.
HOLDER = """
import asyncio
import sys
from askbridge.host.log import events as ev
from askbridge.host.store.datadir import open_store

async def main():
    store = open_store(sys.argv[1])
    await store.create_session(ev.session_header(session_id="s", agent_id="a", origin="root",
        cwd="/", model={}, ask_user_question={}, created_at="2025-01-01T00:00:00Z"))
    print("ready", flush=True)
    sys.stdin.readline()
    for _ in range(2):
        try:
            await store.append("s", [{"type": "x"}])
        except Exception as exc:
            print(type(exc).__name__, getattr(exc, "code", ""), flush=True)
    await store.close()

asyncio.run(main())
"""
