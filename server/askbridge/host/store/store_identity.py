"""The store's identity, kept beside the database rather than in it (S6).

A database truncated to 0 bytes (a bad restore, a full disk during a copy, a
mistaken `: > askbridge.db`), deleted, or replaced by an empty SQLite file looks,
from inside, exactly like a new store: SQLite opens it and the host would list no
sessions and answer UNKNOWN_SESSION for every stored one, with nothing saying the
store was lost. So the first time a store is created in a data directory, a small
file `askbridge.store` (0600) is written next to it, once, naming when. From then
on a start that finds `askbridge.store` but a database that is missing, empty
(0 bytes) or holds no askbridge schema is refused with one line (a StoreError,
STORE_ERROR), instead of starting over.

A directory whose database predates this file (an older askbridge) gets the file
the next time its store opens; a directory with neither is a new store. The file
is never rewritten: deleting it on purpose, with the database, is how a person
says "start this directory over".

These checks run before an inline host answers `initialize`, so this module imports
only `os` (private_files.py says why).
"""

from __future__ import annotations

import os

from .private_files import check_existing_file, refusal

TYPE_CHECKING = False  # not `typing`'s (private_files.py; mypy knows the name)
if TYPE_CHECKING:
    from .private_files import Where

IDENTITY_FILE_NAME = "askbridge.store"


def identity_path(data_dir: Where) -> str:
    return os.path.join(data_dir, IDENTITY_FILE_NAME)


def had_store(data_dir: Where) -> bool:
    """Whether a store was ever created in `data_dir` (its identity file is there, ours)."""
    return check_existing_file(identity_path(data_dir), "store identity file", tighten=True)


def refuse_lost_database(data_dir: Where, db_path: Where) -> None:
    """StoreError when `data_dir` had a store and `db_path` is missing or 0 bytes.

    Runs before the database is created or opened: opening would make a missing or
    empty file into a new, empty store.
    """
    if not had_store(data_dir):
        return
    try:
        size = os.lstat(db_path).st_size
    except FileNotFoundError:
        raise refusal(lost_message(data_dir, db_path, "is missing")) from None
    except OSError as exc:
        raise refusal(f"cannot use the event store {db_path}: {exc.strerror}") from exc
    if size == 0:
        raise refusal(lost_message(data_dir, db_path, "is empty (0 bytes)"))


def lost_message(data_dir: Where, db_path: Where, what: str) -> str:
    """One line: what happened, which file says there was a store, what to do."""
    return (
        f"the event store {db_path} {what}, but {data_dir} held a store "
        f"({identity_path(data_dir)} says so); restore the database from a backup, "
        "or move the directory aside to start a new store"
    )


def write_identity(data_dir: Where) -> None:
    """Write `askbridge.store` once (0600, never through a link); no-op if it exists."""
    # Imported here, not at the top: only a new store writes its identity, and an inline
    # host opens an existing one before it answers `initialize`: `secrets`
    # brings `random`, `base64`, `hmac` (a few ms). (sqlite3 imports datetime anyway.)
    import datetime
    import secrets

    path = identity_path(data_dir)
    created = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    text = f"askbridge store {secrets.token_hex(16)}\ncreated {created}\n"
    tmp = path + ".new"
    try:
        try:
            os.unlink(tmp)  # a leftover of a start killed half way
        except FileNotFoundError:
            pass
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, text.encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        # link, not rename: an identity file that appeared meanwhile is kept as it is.
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
        os.unlink(tmp)
    except OSError as exc:
        raise refusal(f"cannot write the store identity file {path}: {exc.strerror}") from exc
