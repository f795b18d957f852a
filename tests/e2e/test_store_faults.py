"""Store faults over the real door (S4, S5): a full disk ends one turn, a lost data directory
stops the host — never silently, never taking an acknowledged event with it.

The data directory lives on a small tmpfs (root mounts it here, as in CI).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from e2e_scripts import ask_step, script, text_step

from askbridge.testing.hosts import stop_host
from askbridge.testing.wire import RawServer
from lsp_steps import new_session, open_session, prompt_params

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount_point = tmp_path / "mnt"
    mount_point.mkdir()
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=3m,mode=0700", "tmpfs", str(mount_point)], check=True
    )
    try:
        yield mount_point
    finally:
        stop_host(mount_point / "data")  # an auto host holds the files
        subprocess.run(["umount", str(mount_point)], check=False)


def _fill(directory: Path) -> Path:
    """A file that takes every byte left on the filesystem."""
    filler = directory / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (65536, 1):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError:
                pass
    finally:
        os.close(fd)
    return filler


async def test_S4_a_full_disk_ends_the_turn_with_store_error_and_the_host_goes_on(
    small_disk: Path,
) -> None:
    data = small_disk / "data"
    big = [{"id": f"q{i}", "question": "x" * 1900} for i in range(20)]
    model = script(ask_step("call-1", big, timeout=1), text_step("after"))
    args = ("--model", json.dumps(model), "--ask-mode", "timed")
    async with RawServer.start(data, *args) as server:
        first = await open_session(server, {})
        other = await new_session(server, {"model": script(text_step("fine"))})
        filler = _fill(small_disk)
        failed = await server.call("session/prompt", prompt_params(first), timeout=30)
        assert failed["error"]["code"] == -32000, failed
        assert failed["error"]["data"] == {"name": "StoreError", "code": "STORE_ERROR"}
        assert "database or disk is full" in failed["error"]["message"]
        filler.unlink()  # room again: the same process serves every session
        ok = await server.call("session/prompt", prompt_params(other, "hi"), timeout=30)
        assert ok["result"] == {"stopReason": "end_turn"}
        listed = (await server.call("session/list", {}))["result"]["sessions"]
        assert {s["sessionId"] for s in listed} == {first, other}
        assert await server.shutdown_and_exit() == 0


async def test_S5_a_deleted_data_dir_is_told_to_the_client_and_the_host_exits_1(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    async with RawServer.start(data, "--model", json.dumps(script(text_step("hi")))) as server:
        sid = await open_session(server)
        shutil.rmtree(data)
        reply = await server.call("session/prompt", prompt_params(sid), timeout=30)
        assert reply["error"]["data"] == {"name": "StoreError", "code": "STORE_LOST"}
        told = await server.notification("window/showMessage", timeout=10)
        assert told["params"]["type"] == 1 and "deleted or replaced" in told["params"]["message"]
        assert await server.wait(timeout=15) == 1  # it stopped acknowledging, and exits
