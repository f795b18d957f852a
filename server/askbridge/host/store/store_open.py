"""Which store a host runs on (G1): the data directory's SQLite, or a team's PostgreSQL.

`open_store(data_dir, url)`: `url` None is the data directory's own SQLite store
(datadir.open_store); a `postgresql://` URL or libpq key=value words (store_url.py)
is the team store (store_postgres.py), which also locks the data directory and
checks it against the store it used before. Either way the store's `close()`
releases the directory. The driver is imported here only for a team store.

`store_choice(flag)` is the value a command runs with: its `--store` flag, else
`ASKBRIDGE_STORE`, else None (SQLite).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, cast

from .store_url import STORE_ENV, describe, store_problem

if TYPE_CHECKING:
    from .private_files import Where
    from .store_api import EventStore


def store_choice(flag: str | None) -> str | None:
    """`--store`, else `ASKBRIDGE_STORE` (an empty one is unset), else None."""
    return flag or os.environ.get(STORE_ENV) or None


def store_label(url: str | None) -> str:
    """The store as `host --status` and a G1 refusal name it, never with a password."""
    return "the data directory's SQLite" if url is None else describe(url)


async def open_store(data_dir: Where, url: str | None) -> EventStore:
    """The store of the host of `data_dir`: SQLite for None, else the team store at `url`."""
    from .private_files import refusal

    if url is None:
        from .datadir import open_store as open_sqlite_store

        return cast("EventStore", open_sqlite_store(data_dir))
    problem = store_problem(url)
    if problem is not None:
        raise refusal(f"the store {describe(url)} {problem}")
    from .store_postgres import PostgresEventStore

    return cast("EventStore", await PostgresEventStore.open(url, os.fspath(data_dir)))
