"""S5: the data directory's path guard counts only for a holder of our own uid.

Another local user (a forked child that became `nobody`) binds the guard's
predictable abstract-socket name first — as a listener that never accepts, and
with its backlog kept full so the kernel cannot say who holds it. A real server
on that directory still starts and serves, in both host modes; a holder of our
own uid still refuses a second server (test_store_lost.py).
"""

from __future__ import annotations

import os
import pwd
import signal
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from askbridge.host.store.datadir_guard import guard_name
from askbridge.testing.wire import RawServer

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root to become another user"),
]


def squat(name: bytes, full_backlog: bool) -> int:
    """A child of another uid that holds `name`; its pid once it does."""
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the other user: never returns into pytest
        try:
            os.close(ready_r)
            nobody = pwd.getpwnam("nobody")
            os.setgid(nobody.pw_gid)
            os.setuid(nobody.pw_uid)
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.bind(name)
            sock.listen(0)
            fillers = []
            if full_backlog:
                for _ in range(4):  # listen(0) holds one; more wait or fail: either fills it
                    filler = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                    filler.setblocking(False)
                    try:
                        filler.connect(name)
                    except OSError:
                        pass
                    fillers.append(filler)
            os.write(ready_w, b"1")
            signal.pause()
        finally:
            os._exit(0)
    os.close(ready_w)
    assert os.read(ready_r, 1) == b"1"
    os.close(ready_r)
    return pid


@pytest.fixture(params=["listening", "backlog-full"])
def squatted(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    data_dir = tmp_path / "data"
    data_dir.mkdir(mode=0o700)
    pid = squat(guard_name(data_dir), request.param == "backlog-full")
    try:
        yield data_dir
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


async def test_S5_another_users_guard_neither_blocks_nor_takes_over(squatted: Path) -> None:
    async with RawServer.start(squatted) as server:
        await server.initialize()
        created = await server.call("session/new", {})
        assert "sessionId" in created.get("result", {}), (created, server.logs())
        assert await server.shutdown_and_exit() == 0
