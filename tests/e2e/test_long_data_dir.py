"""H1: a data directory too long for `<data-dir>/host.sock` still works, from every command.

On Linux the socket stays `<data-dir>/host.sock`, bound and reached through a descriptor
of the data directory (`/proc/self/fd/N/host.sock` fits any address): no folder outside
the private data directory exists for another user to take first (S5). `host --status`
prints the path. Real processes: `askbridge serve` in both host modes, `host
--status`/`--stop`, the README's pytest harness run by a pytest whose TMPDIR is long (as
macOS's always is), and another local user (nobody, through `setpriv`) who made the
folders an older askbridge used before the victim starts.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from askbridge.process.hostsock import MAX_SOCKET_PATH, socket_path
from askbridge.testing import AskbridgeClient
from askbridge.testing.hosts import stop_host

ASKBRIDGE = [sys.executable, "-m", "askbridge.cli"]
SCRIPT = {"kind": "script", "steps": [{"text": "hello"}]}


def _long_dir(base: Path) -> Path:
    path = base / ("d" * 60) / ("e" * 60)
    assert len(str(path / "host.sock")) > MAX_SOCKET_PATH
    return path


@pytest.fixture
def runtime_dir(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private, short $XDG_RUNTIME_DIR of this test's own (nothing shared with others)."""
    runtime = Path(tempfile.mkdtemp(prefix="abr-", dir="/tmp"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    yield runtime
    shutil.rmtree(runtime, ignore_errors=True)


async def test_H1_a_long_data_dir_serves_in_both_modes(
    tmp_path: Path, runtime_dir: Path, host_mode: str
) -> None:
    data = _long_dir(tmp_path)
    try:
        async with AskbridgeClient.connect(data_dir=data, model=SCRIPT) as client:
            session = await client.new_session()
            assert await client.prompt(session, "hi") == "end_turn"
            sock = Path(socket_path(str(data)))
            assert sock == data / "host.sock"
            assert stat.S_IMODE(os.stat(sock).st_mode) == 0o600
            assert not os.listdir(runtime_dir)  # nothing of ours outside the data dir
            status = subprocess.run(  # noqa: ASYNC221  # a short command; the server is another process
                [*ASKBRIDGE, "host", "--status", "--data-dir", str(data)],
                capture_output=True,
                text=True,
                timeout=30,
            )
            assert status.returncode == 0, status.stderr
            assert f"socket: {sock}" in status.stdout
    finally:
        stop_host(data)


@pytest.mark.inline_only  # `askbridge host` itself: there is no front door's mode to vary
def test_H1_host_stop_and_status_find_a_long_dirs_host(tmp_path: Path, runtime_dir: Path) -> None:
    data = _long_dir(tmp_path)
    host = subprocess.Popen(
        [*ASKBRIDGE, "host", "--data-dir", str(data)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 10
        while not os.path.exists(socket_path(str(data))) and time.monotonic() < deadline:
            assert host.poll() is None, host.stderr.read()  # type: ignore[union-attr]
            time.sleep(0.02)  # a real process starting: no clock to inject
        stopped = subprocess.run(
            [*ASKBRIDGE, "host", "--stop", "--data-dir", str(data)],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert stopped.returncode == 0, stopped.stderr
        assert "stopped the askbridge host" in stopped.stdout
        assert host.wait(10) == 0
        assert not os.path.exists(socket_path(str(data)))
    finally:
        if host.poll() is None:
            host.kill()
            host.wait()
        host.stderr.close()  # type: ignore[union-attr]


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to become another user")
async def test_S5_H1_another_user_cannot_block_a_long_data_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, host_mode: str
) -> None:
    """S5, H1: with no $XDG_RUNTIME_DIR, nobody made `askbridge-<uid>` (the folder an older
    askbridge put a long data dir's socket in) in the shared temporary directory, open
    to all, first. The host still starts and serves, and never looks at that folder."""
    shared = Path(tempfile.mkdtemp(prefix="abr-", dir="/tmp"))  # a /tmp of this test's own
    os.chmod(shared, 0o1777)
    squatted = shared / f"askbridge-{os.getuid()}"
    nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    subprocess.run(  # noqa: ASYNC221  # a short command, before the server starts
        [*nobody, "sh", "-c", f"umask 0; mkdir {squatted}"], check=True, cwd="/", timeout=30
    )
    monkeypatch.setenv("TMPDIR", str(shared))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    data = _long_dir(tmp_path)
    try:
        async with AskbridgeClient.connect(data_dir=data, model=SCRIPT) as client:
            session = await client.new_session()
            assert await client.prompt(session, "hi") == "end_turn"
            assert (data / "host.sock").is_socket()
        assert not os.listdir(squatted)
    finally:
        stop_host(data)
        shutil.rmtree(shared, ignore_errors=True)


def test_H1_the_pytest_harness_works_under_a_long_TMPDIR(tmp_path: Path, host_mode: str) -> None:
    """The README's harness example, run by pytest with a TMPDIR too long for host.sock."""
    long_tmp = _long_dir(tmp_path)
    long_tmp.mkdir(parents=True, mode=0o700)
    (tmp_path / "test_readme.py").write_text(
        textwrap.dedent(
            f"""
            SCRIPT = {json.dumps(SCRIPT)}

            async def test_it(askbridge_client):
                async with askbridge_client(model=SCRIPT) as client:
                    session = await client.new_session()
                    assert await client.prompt(session, "hi") == "end_turn"
            """
        )
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(TMPDIR=str(long_tmp), ASKBRIDGE_HOST=host_mode)
    env.pop("XDG_RUNTIME_DIR", None)  # the system temporary directory: the long TMPDIR itself
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-o",
            "asyncio_mode=auto",
            str(tmp_path / "test_readme.py"),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout
