"""S5: the data directory is private, its lock and database are never opened through a
symbolic link, and a directory deleted or replaced under an open store stops its writes.

Real directories and files in a temp dir; `askbridge serve` itself (a real
process) for what a user sees at start: one line on stderr and exit status 1.
Tests run as root here, so "another user's directory" is made with chown.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from store_helpers import header, refused_start

from askbridge.host.log import events as ev
from askbridge.host.store.datadir import DB_FILE_NAME, LOCK_FILE_NAME, open_store
from askbridge.host.store.store_api import StoreError, StoreLost
from askbridge.host.store.store_identity import IDENTITY_FILE_NAME

NOBODY = 65534


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture
def open_umask() -> Iterator[None]:
    """umask 0: every mode below is what askbridge chose, not what the umask left."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


async def test_S5_a_new_data_dir_is_0700_and_every_file_in_it_0600(
    tmp_path: Path, open_umask: None
) -> None:
    data_dir = tmp_path / "parent" / "data"
    store = open_store(data_dir)
    try:
        await store.create_session(header("s1"))
        await store.append("s1", [{"type": "x", "n": n} for n in range(100)])
        names = sorted(os.listdir(data_dir))
        assert names == sorted(
            [
                DB_FILE_NAME,
                f"{DB_FILE_NAME}-wal",
                f"{DB_FILE_NAME}-shm",
                LOCK_FILE_NAME,
                IDENTITY_FILE_NAME,  # S6: the store's identity, beside the database
            ]
        )
        assert mode(data_dir) == 0o700
        assert {name: mode(data_dir / name) for name in names} == dict.fromkeys(names, 0o600)
    finally:
        await store.close()


async def test_S5_files_an_older_askbridge_left_with_loose_modes_are_made_0600(
    tmp_path: Path,
) -> None:
    store = open_store(tmp_path / "data")
    await store.create_session(header("s1"))
    await store.close()
    for name in (DB_FILE_NAME, LOCK_FILE_NAME, IDENTITY_FILE_NAME):
        os.chmod(tmp_path / "data" / name, 0o644)
    await open_store(tmp_path / "data").close()
    assert mode(tmp_path / "data" / DB_FILE_NAME) == 0o600
    assert mode(tmp_path / "data" / LOCK_FILE_NAME) == 0o600
    assert mode(tmp_path / "data" / IDENTITY_FILE_NAME) == 0o600


@pytest.mark.parametrize("loose", [0o770, 0o707, 0o777, 0o1777])
def test_S5_a_data_dir_writable_by_group_or_others_is_refused(tmp_path: Path, loose: int) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    os.chmod(data_dir, loose)
    expected = (
        f"data directory {data_dir} is writable by group or others (mode {loose:o}); "
        f"run `chmod 700 {data_dir}` to use it"
    )
    with pytest.raises(StoreError) as caught:
        open_store(data_dir)
    assert str(caught.value) == expected
    assert refused_start(data_dir) == expected
    assert refused_start(data_dir, "acp") == expected
    assert os.listdir(data_dir) == []  # refused before anything was created in it


async def test_S5_a_data_dir_others_may_only_read_is_used(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir(mode=0o755)
    os.chmod(data_dir, 0o755)
    store = open_store(data_dir)
    await store.create_session(header("s1"))
    await store.close()
    assert mode(data_dir / DB_FILE_NAME) == 0o600


def test_S5_a_data_dir_of_another_user_is_refused(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir(mode=0o700)
    os.chown(data_dir, NOBODY, NOBODY)
    expected = (
        f"data directory {data_dir} belongs to uid {NOBODY}, not to this user "
        f"(uid {os.geteuid()}); askbridge uses only a directory of its own user"
    )
    with pytest.raises(StoreError) as caught:
        open_store(data_dir)
    assert str(caught.value) == expected
    assert refused_start(data_dir) == expected


async def test_S5_a_symlinked_data_dir_is_judged_by_the_directory_it_names(tmp_path: Path) -> None:
    """Decision: `--data-dir` may be a link (dotfile setups do that); its target must pass."""
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(real)
    store = open_store(tmp_path / "link")
    await store.create_session(header("s1"))
    await store.close()
    assert (real / DB_FILE_NAME).is_file()
    os.chmod(real, 0o777)
    with pytest.raises(StoreError, match="is writable by group or others"):
        open_store(tmp_path / "link")


@pytest.mark.parametrize("name", [LOCK_FILE_NAME, DB_FILE_NAME])
@pytest.mark.parametrize("dangling", [False, True])
async def test_S5_a_planted_lock_or_database_symlink_is_refused_never_followed(
    tmp_path: Path, name: str, dangling: bool
) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir(mode=0o700)
    target = tmp_path / "precious"
    if not dangling:
        target.write_text("keep me\n")
        os.chmod(target, 0o644)
    (data_dir / name).symlink_to(target)
    what = "lock file" if name == LOCK_FILE_NAME else "database"
    expected = f"{what} {data_dir / name} is a symbolic link; askbridge never follows one"
    with pytest.raises(StoreError) as caught:
        open_store(data_dir)
    assert str(caught.value) == expected
    assert refused_start(data_dir) == expected
    if dangling:
        assert not target.exists()  # not created through the link
    else:
        assert target.read_text() == "keep me\n"  # not truncated, not written
        assert mode(target) == 0o644  # not chmod-ed either
    # The lock of a refused open was let go of: removing the link makes the dir usable.
    (data_dir / name).unlink()
    await open_store(data_dir).close()


@pytest.mark.parametrize("suffix", ["-wal", "-shm"])
async def test_S5_a_planted_wal_or_shm_symlink_is_refused(tmp_path: Path, suffix: str) -> None:
    data_dir = tmp_path / "data"
    await open_store(data_dir).close()
    target = tmp_path / "precious"
    target.write_text("keep me\n")
    (data_dir / f"{DB_FILE_NAME}{suffix}").symlink_to(target)
    with pytest.raises(StoreError, match=f"{DB_FILE_NAME}{suffix} is a symbolic link"):
        open_store(data_dir)
    assert target.read_text() == "keep me\n"


def test_S5_a_lock_file_hard_linked_to_another_file_is_refused(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir(mode=0o700)
    target = tmp_path / "precious"
    target.write_text("keep me\n")
    os.link(target, data_dir / LOCK_FILE_NAME)
    with pytest.raises(StoreError, match="has other hard links; askbridge does not use it"):
        open_store(data_dir)
    assert target.read_text() == "keep me\n"


def _lost_by_rm(data_dir: Path) -> None:
    shutil.rmtree(data_dir)


def _lost_by_mv(data_dir: Path) -> None:
    data_dir.rename(data_dir.with_name("moved"))


def _lost_by_new_lock(data_dir: Path) -> None:
    (data_dir / LOCK_FILE_NAME).unlink()
    (data_dir / LOCK_FILE_NAME).write_text("")


def _lost_by_replacement(data_dir: Path) -> None:
    shutil.copytree(data_dir, data_dir.with_name("copy"))
    shutil.rmtree(data_dir)
    data_dir.with_name("copy").rename(data_dir)  # the same names, other files


@pytest.mark.parametrize(
    "lose", [_lost_by_rm, _lost_by_mv, _lost_by_new_lock, _lost_by_replacement]
)
async def test_S5_a_deleted_or_replaced_data_dir_makes_every_later_write_store_lost(
    tmp_path: Path, lose: object
) -> None:
    data_dir = tmp_path / "data"
    store = open_store(data_dir)
    try:
        await store.create_session(header("s1"))
        await store.append("s1", [ev.turn_start("t1", "prompt")])
        assert callable(lose)
        lose(data_dir)
        with pytest.raises(StoreLost) as caught:
            await store.append("s1", [ev.turn_end("t1", "end_turn")])
        assert caught.value.code == "STORE_LOST"
        assert caught.value.name == "StoreError"
        assert str(caught.value) == (
            f"data directory {data_dir} was deleted or replaced while in use "
            f"({data_dir / LOCK_FILE_NAME} is no longer the file this process locked); "
            "nothing more is written"
        )
        # Sticky, for every kind of write, also one that would otherwise be a KeyError.
        for write in (
            lambda: store.append("s1", []),
            lambda: store.append("nope", [ev.turn_start("t2", "prompt")]),
            lambda: store.create_session(header("s2")),
        ):
            with pytest.raises(StoreLost):
                await write()
        with pytest.raises(StoreLost):
            store.check_not_lost()
        # Reads still work; the vetoed batch was rolled back, not committed to the old file.
        assert await store.load("s1") == [header("s1"), ev.turn_start("t1", "prompt")]
        assert [info.session_id for info in await store.list_sessions()] == ["s1"]
    finally:
        await store.close()


async def test_S5_moving_the_data_dir_back_does_not_revive_a_lost_store(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    store = open_store(data_dir)
    try:
        await store.create_session(header("s1"))
        data_dir.rename(tmp_path / "away")
        with pytest.raises(StoreLost):
            await store.append("s1", [])
        (tmp_path / "away").rename(data_dir)
        with pytest.raises(StoreLost):
            await store.append("s1", [])
    finally:
        await store.close()
    # Closing a lost store does not touch the new holder's files; the path is free again.
    await open_store(data_dir).close()


async def test_S5_a_closed_store_frees_the_path_for_a_recreated_directory(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    await open_store(data_dir).close()
    shutil.rmtree(data_dir)
    store = open_store(data_dir)
    await store.create_session(header("s1"))
    await store.close()


async def test_S5_the_lost_check_costs_one_lstat_per_commit_and_can_run_while_idle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data_dir = tmp_path / "data"
    store = open_store(data_dir)
    try:
        await store.create_session(header("s1"))
        calls: list[str] = []
        real_lstat = os.lstat

        def counting_lstat(path: object, *args: object, **kwargs: object) -> os.stat_result:
            calls.append(str(path))
            return real_lstat(path, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(os, "lstat", counting_lstat)
        await store.append("s1", [ev.turn_start(f"t{n}", "prompt") for n in range(20)])
        assert calls == [str(data_dir / LOCK_FILE_NAME)]
        store.check_not_lost()  # nothing lost: no error, and no write
        assert len(await store.load("s1")) == 21
        shutil.rmtree(data_dir)
        with pytest.raises(StoreLost):
            store.check_not_lost()  # noticed without a write
        with pytest.raises(StoreLost):
            await store.append("s1", [])
    finally:
        await store.close()
