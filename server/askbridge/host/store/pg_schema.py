"""The team store's schema in PostgreSQL (G2): its own PostgreSQL schema, `askbridge`,
versioned in `askbridge.store_meta`, created on first use and migrated in one
transaction; a version newer than this code knows is refused in one line.

The schema grows only through `MIGRATIONS`: entry i takes version i to i+1 (entry 0
creates the schema), so a store made by any older release is brought up to date by
the first host that opens it. To change the schema, append a step and never edit a
released one; tables for later features (answers, claims, people, hosts) are new
steps. `open_schema` holds a transaction-scoped advisory lock while it reads and
migrates, so hosts starting together on an empty database create it once.

Layout (version 1), what the EventStore contract (store_api.py) needs, and the
columns ownership uses (G4: `owner_host`, `owner_epoch`, `lease_until`):
- `store_meta(one, store_id, schema_version, created_at)`: one row; `store_id` is the
  identity a data directory remembers (team_identity.py, S6).
- `sessions(id, created_order, created_at, origin, parent_session_id, title,
  next_seq, owner_host, owner_epoch, lease_until)`: the row a header describes, and
  the next sequence number, which every append is fenced on (G3, pg_commit.py).
- `events(session_id, seq, body, type, epoch, committed_at)`, primary key
  (session_id, seq): `body` is the `encode_event` text as `json` (PostgreSQL keeps
  the text exactly and refuses a body that is not JSON), `type` its leading type as
  in event_rows.py (a load reads a lazy event's head off the body it holds anyway,
  pg_rows.py, so there is no `head`), `committed_at` the database's clock (G7). No
  foreign key to `sessions`: the append's fence already proves the row is there,
  and the key's check cost a 64-session commit a third of its server time.
  `sessions` is `fillfactor = 50`: every commit updates its sessions' next_seq, and
  room in the page keeps those updates off the indexes (HOT).
- `fence(...)`: raises inside the append's statement when a session's next_seq is
  not the one its writer expected (FENCED) or the session is gone (NO_SESSION).

Version 2 (pg_team_schema.py) adds what many hosts need: hosts and their liveness
locks, leases' acquisition, answers (first answer wins) and claims (G4-G8).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .pg_team_schema import V2
from .private_files import damage, refusal

if TYPE_CHECKING:
    from .pg_connections import Conn

SCHEMA = "askbridge"
SCHEMA_VERSION = 2  # len(MIGRATIONS); tests/team/test_pg_schema.py checks it

# SQLSTATEs the fence raises, in a class of our own (PostgreSQL's own classes start with
# a digit, or are HV, XX and a few others).
FENCED = "AB409"
NO_SESSION = "AB404"

# pg_advisory_xact_lock's key while a host reads or migrates the schema ("askbrdg1").
_SCHEMA_LOCK = 0x61736B6272646731

_V1 = (
    "CREATE SCHEMA IF NOT EXISTS askbridge",
    """CREATE TABLE askbridge.store_meta (
        one boolean PRIMARY KEY DEFAULT true CHECK (one),
        store_id text NOT NULL,
        schema_version integer NOT NULL,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp())""",
    """CREATE TABLE askbridge.sessions (
        id text PRIMARY KEY,
        created_order bigint GENERATED ALWAYS AS IDENTITY,
        created_at text NOT NULL,
        origin text NOT NULL,
        parent_session_id text,
        title text,
        next_seq bigint NOT NULL,
        owner_host text,
        owner_epoch bigint NOT NULL DEFAULT 0,
        lease_until timestamptz)
        WITH (fillfactor = 50)""",
    "CREATE INDEX sessions_by_created_at ON askbridge.sessions (created_at, created_order)",
    """CREATE TABLE askbridge.events (
        session_id text NOT NULL,
        seq bigint NOT NULL,
        body json NOT NULL,
        type text,
        epoch bigint,
        committed_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        PRIMARY KEY (session_id, seq))""",
    f"""CREATE FUNCTION askbridge.fenced(session_id text, stored bigint, expected bigint)
    RETURNS boolean LANGUAGE plpgsql AS $$
    BEGIN
        IF stored IS NULL THEN
            RAISE EXCEPTION 'unknown session %', session_id
                USING ERRCODE = '{NO_SESSION}', DETAIL = session_id;
        END IF;
        RAISE EXCEPTION 'session % is at event %, not %', session_id, stored, expected
            USING ERRCODE = '{FENCED}', DETAIL = session_id;
    END $$""",
)

Migration = Sequence[str]
MIGRATIONS: list[Migration] = [_V1, V2]


async def read_meta(conn: Conn, where: str) -> tuple[str, int] | None:
    """(store id, schema version), or None for a database without askbridge's schema.
    StoreError for an `askbridge` schema that is not ours, StoreDamaged for a bad row."""
    cur = await conn.execute(
        "SELECT to_regnamespace('askbridge') IS NOT NULL,"
        " to_regclass('askbridge.store_meta') IS NOT NULL"
    )
    row = await cur.fetchone()
    if row is None or not row[0]:
        return None
    if not row[1]:
        raise refusal(
            f"the team store {where} has a schema named askbridge without askbridge's "
            "store_meta table; it is not an askbridge store (use another database)"
        )
    cur = await conn.execute("SELECT store_id, schema_version FROM askbridge.store_meta")
    rows = await cur.fetchall()
    if len(rows) != 1 or not isinstance(rows[0][1], int) or rows[0][1] < 1:
        raise damage(f"the team store {where} is damaged: unreadable store_meta {rows!r}")
    store_id, version = rows[0]
    return str(store_id), int(version)


def check_version(version: int, where: str, known: int = SCHEMA_VERSION) -> None:
    """G2: a store from a newer askbridge is refused in one line, before anything is read."""
    if version > known:
        raise refusal(
            f"the team store {where} has schema version {version}, newer than this "
            f"askbridge understands ({known}); upgrade askbridge on this machine"
        )


async def open_schema(
    conn: Conn,
    where: str,
    *,
    create: bool,
    new_store_id: str,
    migrations: Sequence[Migration] = MIGRATIONS,
) -> str | None:
    """The store id of the database `conn` is on, its schema brought to the current version
    in one transaction. A database without askbridge's schema gets one (as `new_store_id`)
    when `create`; else None, and nothing is written."""
    await check_encoding(conn, where)
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
        meta = await read_meta(conn, where)
        if meta is None and not create:
            return None
        version = 0 if meta is None else meta[1]
        check_version(version, where, len(migrations))
        for step in migrations[version:]:
            for statement in step:
                await conn.execute(statement.encode())
        if meta is None:
            await conn.execute(
                "INSERT INTO askbridge.store_meta (store_id, schema_version) VALUES (%s, %s)",
                (new_store_id, len(migrations)),
            )
            return new_store_id
        if version < len(migrations):
            await conn.execute(
                "UPDATE askbridge.store_meta SET schema_version = %s", (len(migrations),)
            )
        return meta[0]


async def check_encoding(conn: Conn, where: str) -> None:
    """Events are UTF-8 text: a database in another encoding would mangle or refuse them."""
    cur = await conn.execute("SELECT current_setting('server_encoding')")
    row = await cur.fetchone()
    encoding = row[0] if row else "?"
    if encoding != "UTF8":
        raise refusal(
            f"the team store {where} uses the {encoding} encoding; askbridge needs a UTF8 "
            "database (CREATE DATABASE … ENCODING 'UTF8')"
        )
