"""A host's presence in the team store: its `hosts` row, its liveness lock and its one
listening connection (G4, G5).

Why a lock beside the lease (G4, G8): a lease lapses 10 s after its last renewal, so
on its own a host killed with -9 would hold its sessions for up to 10 s. Its
liveness lock is a session-level advisory lock held by one connection of its own:
the server frees it the moment that connection's backend ends, which a kill -9 of
the process causes at once (the socket closes), so another host may take its
sessions over within milliseconds (`askbridge.acquire` tries the lock). The lease
stays the rule for what the lock cannot see: a host paused (SIGSTOP) or cut off
with its connection still open holds the lock, and loses its sessions only when
its leases lapse.

That connection is also the LISTEN connection (G5), outside the pool, so it never
waits behind a commit and a pool that drops connections never drops the lock.
`run` (started by the store's `serve`) LISTENs on the team's channels and hands each
notification's payload to its channel's handler. When the connection is lost (its
backend terminated, the server restarted, the network cut) the host is not alive
to the others until it is back, and every notification sent meanwhile is lost:
`run` polls (`catch_up`, each handler's query of what is new) every `poll_s` second
while it reconnects with backoff (50 ms doubling to 1 s), and once it holds its lock
and LISTENs again it catches up in full, before reading notifications again (a
notification that also arrives for what was caught up is a hint its handler
ignores). The first LISTEN catches up too, for what was followed before `run`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import psycopg

from askbridge.core.errors import StoreError

from .pg_connections import Conn, connect, reason, store_failure
from .pg_team_schema import LIVENESS_LOCK_CLASS
from .team_records import HostRecord

log = logging.getLogger("askbridge.store")

Handler = Callable[[str], None]  # a notification's payload
CatchUp = Callable[[], Awaitable[None]]

APPLICATION_NAME = "askbridge listener"
POLL_S = 1.0
_FIRST_PAUSE_S = 0.05
_LONGEST_PAUSE_S = 1.0

_REGISTER = """
INSERT INTO askbridge.hosts (id, name, pid) VALUES (%s, %s, %s) RETURNING lock_key
"""
_LOCK = f"SELECT pg_advisory_lock({LIVENESS_LOCK_CLASS}, %s)"
_HOSTS = f"""
SELECT h.id, h.name, h.pid, h.started_at, h.last_seen, EXISTS (
    SELECT 1 FROM pg_locks l
    WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
        AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND l.classid = {LIVENESS_LOCK_CLASS} AND l.objid = h.lock_key)
FROM askbridge.hosts h ORDER BY h.started_at, h.id
"""


class Presence:
    def __init__(self, url: str, host_id: str, lock_key: int, conn: Conn) -> None:
        self.url = url
        self.host_id = host_id
        self.lock_key = lock_key
        self.handlers: dict[str, Handler] = {}
        self.catch_ups: list[CatchUp] = []
        self.poll_s = POLL_S
        self._conn: Conn | None = conn
        self._listening = False
        self._closed = False

    @classmethod
    async def register(cls, url: str, host_id: str, name: str) -> Presence:
        """This host's row, and its liveness lock taken on a connection of its own."""
        try:
            conn = await _connect(url)
        except psycopg.Error as exc:
            raise store_failure(exc, "connect to", url) from exc
        try:
            cur = await conn.execute(_REGISTER, (host_id, name, os.getpid()))
            row = await cur.fetchone()
            assert row is not None
            await conn.execute(_LOCK, (int(row[0]),))
        except psycopg.Error as exc:
            await _close(conn)
            raise store_failure(exc, "write to", url) from exc
        except BaseException:
            await _close(conn)
            raise
        return cls(url, host_id, int(row[0]), conn)

    @property
    def listening(self) -> bool:
        """Notifications reach this host now (else it polls)."""
        return self._listening

    @property
    def backend_pid(self) -> int | None:
        """The server process holding the lock (for `pg_terminate_backend` in tests)."""
        conn = self._conn
        return None if conn is None or conn.closed else conn.info.backend_pid

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Listen until cancelled or closed (module docstring); started once listening."""
        started = False
        while not self._closed:
            if self._conn is None or self._conn.closed:
                self._conn = await self._reconnect()
                if self._conn is None:
                    return  # closed meanwhile
            conn = self._conn
            try:
                for channel in self.handlers:
                    await conn.execute(f'LISTEN "{channel}"'.encode())
                self._listening = True
                await self._catch_up()
                if not started:
                    started = True
                    task_status.started()
                async for note in conn.notifies():
                    handler = self.handlers.get(note.channel)
                    if handler is not None:
                        handler(note.payload)
            except psycopg.Error as exc:
                if self._closed:
                    return
                log.warning(
                    "the team store's notifications stopped (%s); polling every %g s "
                    "while reconnecting", reason(exc, self.url), self.poll_s,
                )  # fmt: skip
            finally:
                self._listening = False
            await _close(conn)
            self._conn = None

    async def _reconnect(self) -> Conn | None:
        """A new listening connection holding this host's lock, polling meanwhile; None
        once the store is closed."""
        conn: Conn | None = None
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(self._poll)
            pause = _FIRST_PAUSE_S
            while not self._closed:
                try:
                    conn = await _connect(self.url)
                    # Waits while another host's acquire tries it (one short transaction),
                    # or while this host's old backend has not ended yet.
                    await conn.execute(_LOCK, (self.lock_key,))
                    break
                except psycopg.Error:
                    if conn is not None:
                        await _close(conn)
                        conn = None
                await anyio.sleep(pause)
                pause = min(pause * 2, _LONGEST_PAUSE_S)
            tasks.cancel_scope.cancel()
        if conn is not None and self._closed:
            await _close(conn)
            return None
        if conn is not None:
            log.warning("the team store's notifications are back")
        return conn

    async def _poll(self) -> None:
        while True:
            await anyio.sleep(self.poll_s)
            await self._catch_up()

    async def _catch_up(self) -> None:
        for catch_up in self.catch_ups:
            try:
                await catch_up()
            except StoreError as exc:  # unreachable for now: the next round tries again
                log.debug("catching up failed: %s", exc.message)

    async def unregister(self, pool_run: Callable[[str, Any], Awaitable[Any]]) -> None:
        """Remove this host's row (a clean stop)."""
        self._closed = True

        async def delete(conn: Conn, _: bool) -> None:
            await conn.execute("DELETE FROM askbridge.hosts WHERE id = %s", (self.host_id,))

        await pool_run("write to", delete)

    async def close(self) -> None:
        """Stop listening and free the liveness lock (the connection ends)."""
        self._closed = True
        conn, self._conn = self._conn, None
        if conn is not None:
            await _close(conn)


async def hosts(conn: Conn) -> list[HostRecord]:
    """Every registered host, `up` when its liveness lock is held."""
    cur = await conn.execute(_HOSTS)
    return [HostRecord(*row) for row in await cur.fetchall()]


async def _connect(url: str) -> Conn:
    conn = await connect(url)
    try:
        await conn.execute(f"SET application_name = '{APPLICATION_NAME}'".encode())
    except BaseException:
        await _close(conn)
        raise
    return conn


async def _close(conn: Conn) -> None:
    with anyio.CancelScope(shield=True):
        try:
            await conn.close()
        except psycopg.Error:
            pass  # it is being dropped
