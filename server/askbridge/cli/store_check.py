"""`askbridge store check [URL]` — is the team store usable, and what does it hold (G1).

    askbridge store check postgresql://alice@db.example/team
    store      postgresql://alice@db.example/team
    reachable  yes (PostgreSQL 15.18, 1.3 ms)
    schema     version 2 (store 5f0c2a…)
    sessions   12
    hosts up   2

URL defaults to `ASKBRIDGE_STORE`. It only reads: a database without askbridge's
schema is reported (`none yet`), not created. "hosts up" counts the hosts whose
liveness lock is held (G4, host/store/pg_presence.py): every open team store is
one; a store of schema version 1 counts the hosts holding a live session lease.

Exit status 0 when the store is reachable and this askbridge can use its schema;
1 with one line on stderr when it is unreachable (STORE_UNAVAILABLE's words), its
schema is newer than this askbridge, or it is not askbridge's; 2 for a usage error
(no URL, or one that is not a PostgreSQL address). No password is ever printed
(store_url.py). The driver is imported by this command only.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

EXIT_USAGE = 2
_PROG = "askbridge store check"


def add_store_parser(sub: Any) -> None:
    """Register `store` (and its `check`) on the top-level subparsers (cli/parser.py)."""
    store = sub.add_parser(
        "store",
        help="check the team store (PostgreSQL) that hosts share",
        description="The team store: one PostgreSQL database that the hosts of a team share "
        "(--store URL or ASKBRIDGE_STORE on host, serve, acp, mcp and web).",
    )
    actions = store.add_subparsers(dest="store_action", metavar="{check}", required=True)
    check = actions.add_parser(
        "check",
        help="say whether the store is reachable, its schema version, sessions and hosts up",
        description="Connect to the team store and say whether it is reachable, its schema "
        "version, how many sessions it holds and how many hosts are up. Reads only. Exit "
        "status 0 when it is usable, 1 when not, 2 for a usage error.",
    )
    check.add_argument(
        "url",
        nargs="?",
        metavar="URL",
        help="a postgresql:// URL or libpq key=value words (default: $ASKBRIDGE_STORE)",
    )


def run_store(args: argparse.Namespace) -> int:
    from askbridge.host.store.store_open import store_choice
    from askbridge.host.store.store_url import STORE_ENV, store_problem

    url = store_choice(args.url)
    if url is None:
        return _usage(f"give the store's URL, or set {STORE_ENV}")
    problem = store_problem(url)
    if problem is not None:
        return _usage(f"URL {problem}")
    import anyio

    return anyio.run(_check, url)


def _usage(message: str) -> int:
    print(f"{_PROG}: error: {message}; see {_PROG} --help", file=sys.stderr)
    return EXIT_USAGE


async def _check(url: str) -> int:
    import psycopg

    from askbridge.core.errors import StoreError
    from askbridge.host.store.pg_connections import connect, reason, store_failure
    from askbridge.host.store.store_url import describe

    print(f"store      {describe(url)}", flush=True)
    started = time.perf_counter()
    try:
        conn = await connect(url)
    except psycopg.Error as exc:
        return _fail(store_failure(exc, "connect to", url).message)
    try:
        return await _report(conn, url, started)
    except StoreError as exc:
        return _fail(exc.message)
    except psycopg.Error as exc:
        return _fail(f"cannot read the team store {describe(url)}: {reason(exc, url)}")
    finally:
        await conn.close()


async def _report(conn: Any, url: str, started: float) -> int:
    from askbridge.host.store.pg_schema import check_version, read_meta
    from askbridge.host.store.store_url import describe

    where = describe(url)
    row = await (await conn.execute("SELECT current_setting('server_version')")).fetchone()
    elapsed_ms = (time.perf_counter() - started) * 1000
    version = str(row[0]).split()[0]  # `15.18`, without the distribution's words
    print(f"reachable  yes (PostgreSQL {version}, {elapsed_ms:.1f} ms)", flush=True)
    meta = await read_meta(conn, where)
    if meta is None:
        print("schema     none yet (the first host that uses this store creates it)")
        print("sessions   0")
        print("hosts up   0")
        return 0
    store_id, schema_version = meta
    check_version(schema_version, where)
    print(f"schema     version {schema_version} (store {store_id})")
    sessions = await (await conn.execute("SELECT count(*) FROM askbridge.sessions")).fetchone()
    print(f"sessions   {sessions[0]}")
    if schema_version >= 2:  # hosts and their liveness locks (G4)
        from askbridge.host.store.pg_presence import hosts

        up = sum(1 for host in await hosts(conn) if host.up)
    else:
        row = await (
            await conn.execute(
                "SELECT count(DISTINCT owner_host) FROM askbridge.sessions"
                " WHERE lease_until > clock_timestamp()"
            )
        ).fetchone()
        up = row[0]
    print(f"hosts up   {up}")
    return 0


def _fail(message: str) -> int:
    print(f"askbridge store check: {message}", file=sys.stderr)
    return 1
