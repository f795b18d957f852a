"""S4/D2 with real write faults under a live store: a full disk and a disk gone read-only.

- Disk full: the store lives on a small tmpfs that a filler file then fills.
  The failing append is StoreError (STORE_ERROR) naming the file, nothing of
  the batch is visible (to this connection or to a second, read-only one),
  reads go on, and the same append succeeds once the filler is removed.
- Read-only: `mount -o remount,ro` is refused by the kernel (EBUSY) while
  SQLite holds its files open for writing, so the live case uses what a
  failing disk does: ext4 on a loop device with `errors=remount-ro`, switched
  to read-only by its `trigger_fs_error` knob. Writes then fail (STORE_ERROR),
  reads go on, and after an unmount/fsck/mount the file holds exactly what was
  committed before the fault. A data directory that is read-only at start is
  refused by `open_store` and by `askbridge serve` with one line, exit 1.

Needs root (mount); every mount is undone in a `finally`.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from askbridge.host.log import events as ev
from askbridge.host.store.datadir import DB_FILE_NAME, open_store, open_store_read_only
from askbridge.host.store.store_api import StoreError
from askbridge.testing.wire import serve_command
from full_disk import fill
from session_headers import header

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(os.geteuid() != 0, reason="mounting needs root"),
]


def big_batch(tag: str, count: int = 40, size: int = 20_000) -> list[ev.Event]:
    return [{"type": "test/fault", "tag": tag, "n": n, "pad": "x" * size} for n in range(count)]


def run(*command: str) -> None:
    subprocess.run(command, check=True, capture_output=True, timeout=60)


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 4 MiB tmpfs mounted at tmp_path/mnt."""
    mount_point = tmp_path / "mnt"
    mount_point.mkdir()
    run("mount", "-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs", str(mount_point))
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", str(mount_point)], check=False, capture_output=True)


def test_S4_D2_disk_full_fails_one_write_whole_and_the_store_recovers(tmpfs: Path) -> None:
    data_dir = tmpfs / "data"
    store = open_store(data_dir)
    try:
        asyncio.run(store.create_session(header("s1")))
        asyncio.run(store.append("s1", [ev.turn_start("t1", "prompt")]))
        before = asyncio.run(store.load("s1"))
        filler = fill(tmpfs)

        with pytest.raises(StoreError) as caught:
            asyncio.run(store.append("s1", big_batch("while-full")))
        assert type(caught.value) is StoreError
        assert caught.value.code == "STORE_ERROR"
        assert str(caught.value) == (
            f"cannot write to the event store {data_dir / DB_FILE_NAME}: database or disk is full"
        )
        # Nothing half-written: this connection and a separate reader see the old log.
        assert asyncio.run(store.load("s1")) == before
        reader = open_store_read_only(data_dir)
        try:
            assert asyncio.run(reader.load("s1")) == before
        finally:
            asyncio.run(reader.close())
        assert [info.session_id for info in asyncio.run(store.list_sessions())] == ["s1"]

        filler.unlink()
        asyncio.run(store.append("s1", big_batch("after")))
        assert asyncio.run(store.load("s1")) == before + big_batch("after")
    finally:
        asyncio.run(store.close())
    reopened = open_store(data_dir)
    try:
        assert asyncio.run(reopened.load("s1")) == before + big_batch("after")
    finally:
        asyncio.run(reopened.close())


def test_S4_a_data_dir_on_a_read_only_filesystem_is_refused_at_start(tmpfs: Path) -> None:
    data_dir = tmpfs / "data"
    store = open_store(data_dir)
    asyncio.run(store.create_session(header("s1")))
    asyncio.run(store.close())
    run("mount", "-o", "remount,ro", str(tmpfs))
    expected = f"cannot open lock file {data_dir / 'askbridge.lock'}: Read-only file system"
    with pytest.raises(StoreError) as caught:
        open_store(data_dir)
    assert str(caught.value) == expected
    done = subprocess.run(
        serve_command(data_dir), input=b"", capture_output=True, timeout=60, check=False
    )
    assert (done.returncode, done.stdout, done.stderr.decode()) == (
        1,
        b"",
        f"askbridge: {expected}\n",
    )
    # Reading still works there (askbridge sessions on a mounted backup).
    reader = open_store_read_only(data_dir)
    try:
        assert asyncio.run(reader.load("s1")) == [header("s1")]
    finally:
        asyncio.run(reader.close())


def test_S4_tmpfs_cannot_be_remounted_read_only_under_a_live_store(tmpfs: Path) -> None:
    """Why the read-only case below uses ext4: the kernel refuses this remount (EBUSY)
    while SQLite holds files open for writing, so the store never sees it."""
    store = open_store(tmpfs / "data")
    try:
        asyncio.run(store.create_session(header("s1")))
        done = subprocess.run(
            ["mount", "-o", "remount,ro", str(tmpfs)], capture_output=True, check=False
        )
        assert done.returncode != 0 and b"busy" in done.stderr
        asyncio.run(store.append("s1", [ev.turn_start("t1", "prompt")]))
    finally:
        asyncio.run(store.close())


@pytest.fixture
def ext4(tmp_path: Path) -> Iterator[Path]:
    """A 64 MiB ext4 on a loop device, mounted with errors=remount-ro."""
    if shutil.which("mkfs.ext4") is None:
        pytest.skip("mkfs.ext4 is not installed")
    image, mount_point = tmp_path / "ext4.img", tmp_path / "ext4"
    mount_point.mkdir()
    with open(image, "wb") as file:
        file.truncate(64 * 1024 * 1024)
    run("mkfs.ext4", "-q", "-F", str(image))
    run("mount", "-o", "loop,errors=remount-ro", str(image), str(mount_point))
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", str(mount_point)], check=False, capture_output=True)


def mount_source(mount_point: Path) -> str:
    """The device mounted at `mount_point` (/dev/loopN)."""
    return subprocess.run(
        ["findmnt", "-no", "SOURCE", str(mount_point)], capture_output=True, text=True, check=True
    ).stdout.strip()


def remount_fresh(mount_point: Path) -> None:
    """Unmount the errored filesystem, repair its superblock state, mount it read-write."""
    source = mount_source(mount_point)
    backing = subprocess.run(
        ["losetup", "-nO", "BACK-FILE", source], capture_output=True, text=True, check=True
    ).stdout.strip()
    run("umount", str(mount_point))
    subprocess.run(["e2fsck", "-fy", backing], capture_output=True, check=False)
    run("mount", "-o", "loop,errors=remount-ro", backing, str(mount_point))


def test_S4_D2_a_disk_gone_read_only_fails_writes_whole_and_reads_go_on(ext4: Path) -> None:
    data_dir = ext4 / "data"
    store = open_store(data_dir)
    try:
        asyncio.run(store.create_session(header("s1")))
        asyncio.run(store.append("s1", [ev.turn_start("t1", "prompt")]))
        before = asyncio.run(store.load("s1"))
        # synchronous=NORMAL leaves commits in the page cache (D2 is about kill -9, not a
        # dying disk); flush them so "what was committed" is on the disk being failed.
        os.sync()
        device = os.path.basename(mount_source(ext4))
        Path(f"/sys/fs/ext4/{device}/trigger_fs_error").write_text("test\n")

        for attempt in range(2):  # every write fails the same way; none takes the store down
            with pytest.raises(StoreError) as caught:
                asyncio.run(store.append("s1", big_batch(f"read-only-{attempt}")))
            assert type(caught.value) is StoreError
            assert caught.value.code == "STORE_ERROR"
            assert str(caught.value).startswith(
                f"cannot write to the event store {data_dir / DB_FILE_NAME}: "
            )
            assert asyncio.run(store.load("s1")) == before
        with pytest.raises(StoreError, match="cannot write to the event store"):
            asyncio.run(store.create_session(header("s2")))
        assert [info.session_id for info in asyncio.run(store.list_sessions())] == ["s1"]
    finally:
        asyncio.run(store.close())
    remount_fresh(ext4)
    reopened = open_store(data_dir)
    try:
        assert (
            asyncio.run(reopened.load("s1")) == before
        )  # exactly what was committed before the fault
        asyncio.run(reopened.append("s1", big_batch("after")))  # and the fault is gone
        assert asyncio.run(reopened.load("s1")) == before + big_batch("after")
    finally:
        asyncio.run(reopened.close())
