"""A real PostgreSQL server per test worker, and a database of its own for each test.

Debian's `postgresql` package (its newest /usr/lib/postgresql/*/bin, else `initdb`
on PATH; .ci/run installs it). The server starts when a test of the worker first
asks for it (`pg_server`, session-scoped) and stops at the end of the session: on
a clean end, a failure or Ctrl-C alike, and if the worker itself is killed the
server gets SIGKILL from the kernel (`--pdeathsig`), so nothing outlives the tests.

- `initdb` refuses to run as root, and CI runs as root: then `initdb` and
  `postgres` run as the `postgres` user (setpriv), in a directory of theirs under
  /tmp (a test's own tmp_path is root's and closed to them).
- Unix socket only (`listen_addresses=''`), in that directory, so its path stays
  far below the 107 bytes a socket's address may have; `fsync=off` and
  `wal_level=minimal`: no test here survives the machine losing power.
- `pg_hba.conf`: `trust` for every local user but `PASSWORD_ROLE`, whose password
  is checked (scram-sha-256): the store's "no password in any output" tests use a
  real one.
- Each test's database is a copy of an empty template (`CREATE DATABASE … TEMPLATE`,
  `STRATEGY FILE_COPY`), owned by `PASSWORD_ROLE` so both roles can use it.

`pg_dsn` yields the test's database as a `postgresql://` URL (the unix socket
directory as `host`); `pg_database` the same with the server, for tests that need
to reach behind the store (terminate its connections, drop its schema, stop the
server).
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psycopg
import pytest

PASSWORD_ROLE = "askbridge_pw"
PASSWORD = "pw-" + secrets.token_hex(8)  # distinctive: found in any output it leaks into
TEMPLATE = "askbridge_template"
_START_TIMEOUT_S = 60.0
# Unix socket only; nothing here survives the machine losing power, so nothing is synced.
TEST_SETTINGS = {
    "listen_addresses": "",
    "fsync": "off",
    "full_page_writes": "off",
    "synchronous_commit": "off",
    "wal_level": "minimal",
    "max_wal_senders": "0",
    "max_connections": "50",
    "shared_buffers": "16MB",  # a server per worker: keep each one small
}
_STOP_TIMEOUT_S = 10.0


def pg_bin() -> Path:
    """The directory of the newest installed `initdb` and `postgres`."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4])
    )
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    if initdb is None:
        raise RuntimeError("PostgreSQL is not installed (apt-get install postgresql)")
    return Path(initdb).resolve().parent


class PostgresServer:
    """One `postgres` process on a fresh cluster in its own directory."""

    def __init__(self) -> None:
        self.bin = pg_bin()
        self.root = Path(tempfile.mkdtemp(prefix="abpg-", dir="/tmp"))
        self.data = self.root / "data"
        self.socket_dir = str(self.root)
        self.log = self.root / "postgres.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.paused = False
        self._names = itertools.count()
        self._as_owner: list[str] = []
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres", "postgres")
            self._as_owner = ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups"]

    def init(self) -> None:
        subprocess.run(
            [*self._as_owner, str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres",
             "-A", "trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"],
            check=True, capture_output=True, timeout=120,
        )  # fmt: skip
        hba = f"local all {PASSWORD_ROLE} scram-sha-256\nlocal all all trust\n"
        self._write_as_owner(self.data / "pg_hba.conf", hba)

    def _write_as_owner(self, path: Path, text: str) -> None:
        path.write_text(text)
        if self._as_owner:
            shutil.chown(path, "postgres", "postgres")

    def start(self, settings: dict[str, str] | None = None) -> None:
        """Start it with `settings` (`-c` options) over TEST_SETTINGS."""
        options = [f"{key}={value}" for key, value in {**TEST_SETTINGS, **(settings or {})}.items()]
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [*self._as_owner, *(["--pdeathsig", "KILL"] if self._as_owner else []),
                 str(self.bin / "postgres"), "-D", str(self.data), "-k", self.socket_dir,
                 *(word for option in options for word in ("-c", option))],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
        deadline = time.monotonic() + _START_TIMEOUT_S
        while True:
            try:
                with self.admin():
                    return
            except psycopg.OperationalError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"postgres did not start:\n{self.log.read_text()}") from None
                time.sleep(0.05)

    def stop(self, *, fast: bool = True) -> None:
        """Stop the server (SIGINT: fast shutdown; SIGQUIT when not `fast`: as after a crash),
        SIGKILL if it lingers."""
        if self.paused and self.process is not None and self.process.poll() is None:
            self.resume()  # a paused server cannot stop
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGINT if fast else signal.SIGQUIT)
        try:
            process.wait(_STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()

    def processes(self) -> list[int]:
        """The postmaster's pid and its children's (each backend is a session of its own,
        so signalling the postmaster's process group does not reach them)."""
        assert self.process is not None
        pids = [self.process.pid]
        for stat in glob.glob("/proc/[0-9]*/stat"):
            with contextlib.suppress(OSError, ValueError, IndexError):
                fields = Path(stat).read_text().rsplit(")", 1)[1].split()
                if int(fields[1]) == self.process.pid:
                    pids.append(int(stat.split("/")[2]))
        return pids

    def pause(self) -> None:
        """SIGSTOP the server and its backends: connections open, nothing answers."""
        self._signal_all(signal.SIGSTOP)
        self.paused = True

    def resume(self) -> None:
        self._signal_all(signal.SIGCONT)
        self.paused = False

    def _signal_all(self, signum: int) -> None:
        for pid in self.processes():
            with contextlib.suppress(ProcessLookupError):  # a backend that just ended
                os.kill(pid, signum)

    def remove(self) -> None:
        try:
            self.stop()
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def url(self, dbname: str = "postgres", user: str = "postgres", password: str = "") -> str:
        secret = f":{quote(password, safe='')}" if password else ""
        return f"postgresql://{user}{secret}@/{dbname}?host={quote(self.socket_dir)}"

    def admin(self, dbname: str = "postgres") -> psycopg.Connection[tuple[Any, ...]]:
        return psycopg.connect(self.url(dbname), autocommit=True, connect_timeout=5)

    def prepare(self) -> None:
        """The password role and the empty template every test's database copies."""
        with self.admin() as conn:
            conn.execute(f"CREATE ROLE {PASSWORD_ROLE} LOGIN PASSWORD '{PASSWORD}'")
            conn.execute(f"CREATE DATABASE {TEMPLATE} TEMPLATE template0 ENCODING 'UTF8'")

    def new_database(self) -> str:
        name = f"t{next(self._names)}"
        with self.admin() as conn:
            conn.execute(
                f"CREATE DATABASE {name} TEMPLATE {TEMPLATE} OWNER {PASSWORD_ROLE}"
                " STRATEGY FILE_COPY"
            )
        return name


def start_server(settings: dict[str, str] | None = None) -> PostgresServer:
    server = PostgresServer()
    try:
        server.init()
        server.start(settings)
        server.prepare()
    except BaseException:
        server.remove()
        raise
    return server


@dataclass
class Database:
    server: PostgresServer
    name: str

    @property
    def url(self) -> str:
        return self.server.url(self.name)

    def password_url(self) -> str:
        return self.server.url(self.name, PASSWORD_ROLE, PASSWORD)

    def admin(self) -> psycopg.Connection[tuple[Any, ...]]:
        return self.server.admin(self.name)

    def query(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        with self.admin() as conn:
            cur = conn.execute(sql.encode(), params or None)
            return cur.fetchall() if cur.description else []

    def terminate_store_connections(self) -> int:
        """pg_terminate_backend of every askbridge connection to this database."""
        rows = self.query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = %s AND application_name = 'askbridge'",
            self.name,
        )
        return len(rows)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PostgresServer]:
    """This worker's PostgreSQL server, started on first use, stopped at the session's end."""
    server = start_server()
    try:
        yield server
    finally:
        server.remove()


@pytest.fixture
def pg_database(pg_server: PostgresServer) -> Database:
    """A fresh, empty database of this test's own."""
    return Database(pg_server, pg_server.new_database())


@pytest.fixture
def pg_dsn(pg_database: Database) -> str:
    """The URL of this test's own database."""
    return pg_database.url


@pytest.fixture
def own_pg_server() -> Iterator[PostgresServer]:
    """A server of this test's alone, for a test that stops or restarts it."""
    server = start_server()
    try:
        yield server
    finally:
        server.remove()
