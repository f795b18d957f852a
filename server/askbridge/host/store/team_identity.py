"""Which team store a data directory used, kept beside it (G2, S6).

The SQLite store keeps its identity outside its database (store_identity.py) so an
emptied or replaced file is refused, never taken for a new store. The team store
does the same: the first time a data directory's host opens a team store it writes
`askbridge.team` (0600, once) naming that store's id (`store_meta.store_id`, made
when the schema was created). From then on, a database that holds no askbridge
schema any more (emptied, dropped, a wrong or restored-empty database) or holds
another store is refused with one line instead of being used: the first would be
re-created empty and the host would call every session unknown; the second would
mix two teams' sessions.

Only the id is kept: never the address, which may hold a password (G1, G9).
Deleting the file on purpose is how a person says "this directory now uses another
store".
"""

from __future__ import annotations

import os

from .private_files import check_existing_file, open_private_file, refusal

TEAM_FILE_NAME = "askbridge.team"
_PREFIX = "askbridge team store "


def team_file(data_dir: str) -> str:
    return os.path.join(data_dir, TEAM_FILE_NAME)


def remembered_store(data_dir: str) -> str | None:
    """The id of the team store `data_dir` used, or None if it never used one."""
    path = team_file(data_dir)
    if not check_existing_file(path, "team store file", tighten=True):
        return None
    fd = open_private_file(path, "team store file")
    try:
        text = os.read(fd, 4096).decode(errors="replace")
    finally:
        os.close(fd)
    first = text.partition("\n")[0]
    if not first.startswith(_PREFIX) or not first.removeprefix(_PREFIX).strip():
        raise refusal(f"team store file {path} is not one askbridge wrote; move it aside")
    return first.removeprefix(_PREFIX).strip()


def remember_store(data_dir: str, store_id: str) -> None:
    """Write `askbridge.team` naming `store_id`, once (O_EXCL; a file already there is kept)."""
    path = team_file(data_dir)
    try:
        fd = open_private_file(path, "team store file", os.O_EXCL)
    except Exception:
        if remembered_store(data_dir) is not None:
            return  # another start wrote it meanwhile; the caller checks it on its next open
        raise
    try:
        os.write(fd, f"{_PREFIX}{store_id}\n".encode())
        os.fsync(fd)
    except OSError as exc:
        raise refusal(f"cannot write team store file {path}: {exc.strerror}") from exc
    finally:
        os.close(fd)


def emptied_message(where: str, data_dir: str, store_id: str) -> str:
    return (
        f"the team store {where} holds no askbridge data, but {data_dir} used the store "
        f"{store_id} ({team_file(data_dir)} says so); restore that database, point --store "
        f"at it, or delete {team_file(data_dir)} to start this directory on a new store"
    )


def different_message(where: str, data_dir: str, found: str, store_id: str) -> str:
    return (
        f"the team store {where} is the store {found}, but {data_dir} used the store "
        f"{store_id} ({team_file(data_dir)} says so); point --store at that store, or "
        f"delete {team_file(data_dir)} to use this one"
    )
