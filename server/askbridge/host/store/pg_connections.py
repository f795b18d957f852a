"""The team store's connections to PostgreSQL, and its failures as StoreErrors (G3).

`Connections.run(action, work)` runs `work(conn, retried)` on a connection of a small
set (at most `size` at once: one commit in flight and the reads beside it). When the
connection is lost (the server restarted, a backend terminated, the network cut) or
cannot be made, it is dropped and `work` runs again on a new one after a pause that
doubles from 50 ms to 1 s, until `unavailable_after` seconds (10) from the call;
then the call fails with STORE_UNAVAILABLE (`the team store is unreachable: <why>`,
libpq's reason), never a hang: the whole call, the server's answers included, runs
under that deadline. `retried` tells `work` that an earlier attempt may have
written: a commit is fenced so that a retry never writes twice (pg_commit.py). The
log says when the store is first found unreachable and when it answers again (a
WARNING each), not every retry.

Why not psycopg_pool: its reconnection pauses start at 1 s and double up to its
reconnect timeout (constants private to it), so a host could sit out several
seconds after the database is back; and its PoolTimeout does not say why the
server cannot be reached, which STORE_UNAVAILABLE must.

Every other database error is mapped once, here (`store_failure`): data the server
reports corrupt, or askbridge's tables gone while in use, is StoreDamaged
(STORE_DAMAGED, S6); anything else StoreError (STORE_ERROR) naming the store and
the action. Messages name the store by `store_url.describe` and pass through
`store_url.scrub`: no password in them (G1).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
import psycopg

from askbridge.core.errors import StoreDamaged, StoreError, StoreUnavailable

from . import store_url

log = logging.getLogger("askbridge.store")
Conn = psycopg.AsyncConnection[tuple[Any, ...]]
T = TypeVar("T")
Work = Callable[[Conn, bool], Awaitable[T]]

UNAVAILABLE_AFTER_S = 10.0
_FIRST_PAUSE_S = 0.05
_LONGEST_PAUSE_S = 1.0
_CONNECT_TIMEOUT_S = 10  # libpq's connect_timeout (whole seconds), also under the deadline

# Connection exceptions (class 08), the server shutting down or starting (57P01-57P03),
# too many connections (53300): the store is unreachable for now, the call is retried.
_UNREACHABLE_CLASSES = ("08",)
_UNREACHABLE_STATES = {"57P01", "57P02", "57P03", "53300"}
# The data is corrupt (XX001, XX002) or askbridge's schema is gone while in use.
_CORRUPT_STATES = {"XX001", "XX002"}
_GONE_STATES = {"42P01", "3F000", "42883"}  # undefined table, schema, function
# A server's refusals of a connection that pass (it is starting, stopping, full).
_PASSING_REFUSALS = (
    "starting up",
    "shutting down",
    "not yet accepting connections",
    "in recovery mode",
    "too many clients",
    "terminating connection",
)


class Connections:
    def __init__(
        self,
        url: str,
        *,
        size: int = 4,
        unavailable_after: float = UNAVAILABLE_AFTER_S,
    ) -> None:
        self.url = url
        self.where = store_url.describe(url)
        self.unavailable_after = unavailable_after
        self._idle: list[Conn] = []
        self._slots = anyio.Semaphore(size)
        self._closed = False
        self._down: str | None = None  # why the store was last found unreachable

    def _lost(self, why: str) -> None:
        if self._down is None:
            log.warning("the team store %s is unreachable: %s; retrying", self.where, why)
        self._down = why

    def _answered(self) -> None:
        if self._down is not None:
            self._down = None
            log.warning("the team store %s answers again", self.where)

    async def run(self, action: str, work: Work[T]) -> T:
        """`work(conn, retried)` on a live connection (module docstring: retries, deadline)."""
        pause = _FIRST_PAUSE_S
        retried = False
        why = "no answer in time"
        try:
            with anyio.fail_after(self.unavailable_after):
                while True:
                    self._check_open()
                    async with self._slots:
                        try:
                            result = await self._attempt(work, retried)
                        except psycopg.Error as exc:
                            if not unreachable(exc):
                                raise store_failure(exc, action, self.url) from exc
                            why = reason(exc, self.url)
                            self._lost(why)
                        else:
                            self._answered()
                            return result
                    retried = True
                    await anyio.sleep(pause)
                    pause = min(pause * 2, _LONGEST_PAUSE_S)
        except TimeoutError:
            self._lost(why)
            raise StoreUnavailable(f"{why} (for {self.unavailable_after:g} s)") from None

    async def _attempt(self, work: Work[T], retried: bool) -> T:
        conn = self._idle.pop() if self._idle else await self._connect()
        try:
            result = await work(conn, retried)
        except BaseException:
            # A connection whose state is not known (broken, cancelled mid-query, left in a
            # transaction) is never reused.
            if conn.broken or conn.closed or not _idle_status(conn):
                await _discard(conn)
            else:
                self._idle.append(conn)
            raise
        if self._closed or not _idle_status(conn):
            await _discard(conn)
        else:
            self._idle.append(conn)
        return result

    async def _connect(self) -> Conn:
        return await connect(self.url)

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(f"the team store {self.where} is closed")

    @property
    def closed(self) -> bool:
        return self._closed

    async def close(self) -> None:
        self._closed = True
        idle, self._idle = self._idle, []
        for conn in idle:
            await _discard(conn)


async def connect(url: str, timeout_s: int = _CONNECT_TIMEOUT_S) -> Conn:
    """One autocommit connection to `url`, in UTF-8, named `askbridge` for the server's
    views (pg_stat_activity) unless the address names itself."""
    extra: dict[str, Any] = {"autocommit": True, "client_encoding": "UTF8"}
    given = _stated(url)
    if "application_name" not in given:
        extra["application_name"] = "askbridge"
    if "connect_timeout" not in given:
        extra["connect_timeout"] = timeout_s
    return await psycopg.AsyncConnection.connect(url, **extra)


def _stated(url: str) -> dict[str, str]:
    try:
        return store_url.parameters(url)
    except ValueError:
        return {}


def _idle_status(conn: Conn) -> bool:
    return conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE


async def _discard(conn: Conn) -> None:
    with anyio.CancelScope(shield=True):
        try:
            await conn.close()
        except psycopg.Error:
            pass  # it is being dropped because it failed


def unreachable(exc: psycopg.Error) -> bool:
    """The server cannot be reached (or dropped us): retry, then STORE_UNAVAILABLE. A server
    that answers a connection with a lasting refusal (no such role or database, a wrong
    password, pg_hba.conf) is not unreachable: that is said at once."""
    state = exc.sqlstate
    if state is not None:
        return state.startswith(_UNREACHABLE_CLASSES) or state in _UNREACHABLE_STATES
    if not isinstance(exc, psycopg.OperationalError):
        return False
    # libpq gives no SQLSTATE for a failed connection: the server's FATAL words say it.
    text = str(exc)
    return "FATAL:" not in text or any(words in text for words in _PASSING_REFUSALS)


def reason(exc: BaseException, url: str) -> str:
    """libpq's or the server's words for `exc`, one line, no password."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if "connection info string" in text or "invalid URI" in text:
        # libpq quotes a word of the address it cannot read, which may be a password.
        return "the address is not a valid PostgreSQL connection string"
    for prefix in ("connection is bad: ", "connection failed: "):
        text = text.removeprefix(prefix)
    text = text.replace("FATAL:  ", "FATAL: ")
    return store_url.scrub(text, url)


def store_failure(exc: psycopg.Error, action: str, url: str) -> StoreError:
    """A database error as the StoreError a caller gets (module docstring)."""
    where = store_url.describe(url)
    why = reason(exc, url)
    if exc.sqlstate in _CORRUPT_STATES:
        return StoreDamaged(f"the team store {where} is damaged: {why}")
    if exc.sqlstate in _GONE_STATES:
        return StoreDamaged(
            f"the team store {where} lost askbridge's tables while in use ({why}); "
            "restore the database from a backup"
        )
    if unreachable(exc):
        return StoreUnavailable(why)
    if exc.sqlstate is None and isinstance(exc, psycopg.OperationalError):
        action = "connect to"
    return StoreError(f"cannot {action} the team store {where}: {why}")
