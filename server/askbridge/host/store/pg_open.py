"""Opening the team store (store_postgres.py's `open`): the data directory locked (one
host per directory, H1), the schema created or migrated (G2, pg_schema.py), the store
checked against the one the directory used before (S6, team_identity.py), and this
store registered as a host of the team (pg_team.py). Whatever fails undoes what was
done before it.
"""

from __future__ import annotations

import secrets

from askbridge.core.clock import Clock

from .datadir import DataDirLock
from .pg_connections import Conn, Connections
from .pg_schema import open_schema
from .pg_team import Team
from .private_files import make_private_dir, refusal
from .team_identity import different_message, emptied_message, remember_store, remembered_store

Parts = tuple[Connections, str, Team, DataDirLock | None]


async def open_parts(
    url: str,
    data_dir: str | None,
    unavailable_after: float,
    host_name: str | None,
    clock: Clock | None,
) -> Parts:
    """The connections, store id, team host and data directory lock of a store at `url`."""
    lock = None
    if data_dir is not None:
        make_private_dir(data_dir)
        lock = DataDirLock(data_dir)
        lock.acquire()
    db = Connections(url, unavailable_after=unavailable_after)
    try:
        remembered = remembered_store(data_dir) if data_dir is not None else None
        new_id = secrets.token_hex(16)

        async def schema(conn: Conn, _: bool) -> str | None:
            return await open_schema(conn, db.where, create=remembered is None, new_store_id=new_id)

        store_id = await db.run("open", schema)
        if data_dir is not None:
            if store_id is None:
                raise refusal(emptied_message(db.where, data_dir, str(remembered)))
            if remembered is not None and remembered != store_id:
                raise refusal(different_message(db.where, data_dir, store_id, remembered))
            if remembered is None:
                remember_store(data_dir, store_id)
        assert store_id is not None  # created: `remembered` was None
        team = await Team.join(db, host_name, clock)
    except BaseException:
        await db.close()
        if lock is not None:
            lock.release()
        raise
    return db, store_id, team, lock
