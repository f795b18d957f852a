"""The data directory: where it is (protocol.md "Command line", `--data-dir`) and
its lock, which lets exactly one process use it and names that process to others.

The lock tests use real second processes (`python -c` over real pipes), since
the whole point is what another process sees.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from askbridge.host.store.datadir import (
    DB_FILE_NAME,
    LOCK_FILE_NAME,
    DataDirLock,
    open_store,
    resolve_data_dir,
)
from askbridge.host.store.store_api import StoreError

# Opens the store at argv[1]; prints the StoreError and exits 3 if refused,
# else says "ready" and keeps the store open until its stdin closes.
OPENER = """
import asyncio
import sys
from askbridge.host.store.datadir import open_store
from askbridge.host.store.store_api import StoreError
try:
    store = open_store(sys.argv[1])
except StoreError as exc:
    print(exc, file=sys.stderr)
    sys.exit(3)
print("ready", flush=True)
sys.stdin.read()
asyncio.run(store.close())
"""


def run_opener(data_dir: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", OPENER, str(data_dir)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_data_dir_flag_wins_and_expands_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_STATE_HOME", "/xdg")
    assert resolve_data_dir("~/mine") == tmp_path / "mine"
    monkeypatch.chdir(tmp_path)
    assert resolve_data_dir("rel") == tmp_path / "rel"


def test_data_dir_defaults_to_xdg_state_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", "/xdg/state")
    assert resolve_data_dir(None) == Path("/xdg/state/askbridge")


@pytest.mark.parametrize("xdg", [None, "", "relative/state"])
def test_data_dir_falls_back_to_local_state(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, xdg: str | None
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    if xdg is None:
        monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    else:
        monkeypatch.setenv("XDG_STATE_HOME", xdg)
    assert resolve_data_dir(None) == tmp_path / ".local" / "state" / "askbridge"


async def test_open_store_creates_the_directory_and_names_its_holder(tmp_path: Path) -> None:
    data_dir = tmp_path / "a" / "b"
    store = open_store(data_dir)
    try:
        assert (data_dir / DB_FILE_NAME).is_file()
        pid, command = (data_dir / LOCK_FILE_NAME).read_text().splitlines()
        assert pid == str(os.getpid())
        assert command
    finally:
        await store.close()
    assert (data_dir / LOCK_FILE_NAME).read_text() == ""


async def test_a_second_opener_in_this_process_is_refused_until_close(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    with pytest.raises(StoreError) as caught:
        open_store(tmp_path)
    assert str(caught.value).startswith(
        f"data directory {tmp_path} is in use by process {os.getpid()} ("
    )
    await store.close()
    await open_store(tmp_path).close()


async def test_another_process_is_refused_while_we_hold_the_store(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    try:
        child = run_opener(tmp_path)
        out, err = child.communicate(timeout=30)
    finally:
        await store.close()
    assert child.returncode == 3, err
    assert out == ""
    assert err.strip().startswith(f"data directory {tmp_path} is in use by process {os.getpid()} (")
    assert "Traceback" not in err


async def test_we_are_refused_while_another_process_holds_the_store(tmp_path: Path) -> None:
    child = run_opener(tmp_path)
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == "ready\n"
        with pytest.raises(StoreError) as caught:
            open_store(tmp_path)
        assert str(caught.value).startswith(
            f"data directory {tmp_path} is in use by process {child.pid} (python"
        )
        assert " -c " in str(caught.value)
    finally:
        child.communicate(input="", timeout=30)
    assert child.returncode == 0
    # The child closed its store, so the directory is free again.
    await open_store(tmp_path).close()


def test_a_data_dir_that_is_a_file_is_reported(tmp_path: Path) -> None:
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    with pytest.raises(StoreError, match=f"cannot create data directory {not_a_dir}"):
        open_store(not_a_dir)


def test_lock_is_reentrant_free_and_releases_once(tmp_path: Path) -> None:
    lock = DataDirLock(tmp_path)
    lock.acquire()
    lock.acquire()  # already ours: no self-deadlock
    assert lock.held
    lock.release()
    lock.release()
    assert not lock.held
    with DataDirLock(tmp_path) as again:
        assert again.held
