"""`<data-dir>/host.sock`: where front doors hand the host their client (H1, H4, H6, H7).

The socket is created 0600 inside the 0700 data directory and accepts only
peers of this user (`SO_PEERCRED`); it is the host's only listener. One
newline-delimited JSON message starts each connection (protocol.md "The host
socket"):

- `{"hello": {door, version, options, cwd, env, pid}}` with the front door's
  stdin and stdout attached (SCM_RIGHTS): answered `{"attached": {hostPid,
  version}}`, the door is served on those descriptors, and `{"exit": status}`
  follows when it is done (with `stopped`, the reason as a front door prints it after
  "the host of D", when the host cut it off, H8). Another version is `{"refused": {reason}}` (H7).
  With `"relay": true` (no descriptors) the answer carries a `token`, and the
  front door's next connection `{"relay": token}` carries the client's bytes.
- `{"status": true}` → `{"status": {pid, version, dataDir, doors, sessions}}`.
- `{"stop": true}` → `{"stopping": pid}`, then the host stops (H6).

A front door's client runs in this listener's task group; stopping the host
cuts them off (their front doors get `{"exit": 1}`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import TaskGroup, TaskStatus

from askbridge import __version__
from askbridge.host.host import Host
from askbridge.host.store.store_open import store_label
from askbridge.host.store.store_url import STORE_ENV
from askbridge.jsonrpc import Input
from askbridge.jsonrpc.stdio import open_inbound, open_write_pipe
from askbridge.process.hostsock import bind_host_socket, socket_path

from .doors import front_door_says, log_start, serve_door
from .socket_lines import cancel_when_closed, close_quietly, peer_of, read_first_line, send_line

log = logging.getLogger("askbridge.daemon")


@dataclass(eq=False)
class AttachedDoor:
    door: str
    pid: int
    cwd: str
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)


class HostSocket:
    def __init__(
        self,
        host: Host,
        data_dir: Path,
        on_stop: Callable[[], None],
        *,
        inline: bool = False,
        sock: socket.socket | None = None,
    ) -> None:
        """`sock`: the socket `bind_host_socket` made before the event loop ran, if any."""
        self.host = host
        # G1: the store this host runs on, as a person names it (never a password): what
        # every attaching door must have been given too.
        self.store = store_label(os.environ.get(STORE_ENV) or None)
        self.inline = inline  # an inline front door's process: it lives for its own client
        self.data_dir = data_dir
        self.path = Path(socket_path(str(data_dir)))  # H1: where bind_host_socket binds
        self._on_stop = on_stop
        self.doors: list[AttachedDoor] = []
        self.changed = anyio.Event()  # set (and renewed) whenever a door attaches or leaves
        # Relay token → (data connection, bytes already read past its first line).
        self._relays: dict[str, asyncio.Future[tuple[socket.socket, bytes]]] = {}
        self._sock: socket.socket | None = sock
        # H8: why the host stops, as its cut-off front doors print it after "the host of D"
        # (None while it runs: a door cut off then is a fatal error's).
        self.stop_reason: str | None = None

    def stopping(self, logged: str, told: str) -> None:
        """H6/H8: record why the host stops (`logged` in host.log, `told` to front doors);
        the first reason wins (a --stop's shutdown is not also a later signal's)."""
        if self.stop_reason is None:
            self.stop_reason = told
            log.info("stopping: %s", logged)

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Listen until cancelled; ready (bound) when `task_status.started()` is called."""
        if self._sock is None:
            self._sock = bind_host_socket(self.data_dir)
        try:
            async with anyio.create_task_group() as tg:
                task_status.started()
                while True:
                    await anyio.wait_readable(self._sock)
                    try:
                        conn, _ = self._sock.accept()
                    except (BlockingIOError, InterruptedError):
                        continue
                    tg.start_soon(self._serve_connection, conn, tg)
        finally:
            self.close()

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
            try:
                self.path.unlink()
            except FileNotFoundError:
                pass

    def _touch(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()

    # -- one connection ---------------------------------------------------------------------

    async def _serve_connection(self, conn: socket.socket, tg: TaskGroup) -> None:
        conn.setblocking(False)
        try:
            pid, uid = peer_of(conn)
            if uid != os.getuid():  # H1: this user's processes only
                log.warning("refused a connection from uid %d (pid %d)", uid, pid)
                conn.close()
                return
            message, fds, rest = await read_first_line(conn)
        except (OSError, ValueError) as exc:
            log.info("dropped a connection to %s: %s", self.path, exc)
            conn.close()
            return
        try:
            if "hello" in message:
                await self._attach(conn, message["hello"], fds)
            elif "relay" in message:
                self._take_relay(conn, str(message["relay"]), rest)
                conn = None  # type: ignore[assignment]  # handed to the waiting door
            elif "status" in message:
                await send_line(conn, {"status": self.status()})
            elif "stop" in message:
                await send_line(conn, {"stopping": os.getpid()})
                self.stopping(
                    f"--stop from pid {pid}", f"was stopped (askbridge host --stop, pid {pid})"
                )
                self._on_stop()
        finally:
            for fd in fds:
                close_quietly(fd)
            if conn is not None:
                conn.close()

    async def _attach(self, conn: socket.socket, hello: Any, fds: list[int]) -> None:
        if not isinstance(hello, dict) or hello.get("version") != __version__:
            version = hello.get("version") if isinstance(hello, dict) else None
            reason = (
                f"the askbridge host of {self.data_dir} (pid {os.getpid()}) is version "
                f"{__version__}, this front door is {version}; stop it with "
                f"`askbridge host --stop --data-dir {self.data_dir}` and start again"
            )
            await send_line(conn, {"refused": {"reason": reason}})  # H7
            return
        refusal = self._store_refusal(hello)
        if refusal is not None:
            await send_line(conn, {"refused": {"reason": refusal}})
            return
        relay = bool(hello.get("relay"))
        if not relay and len(fds) != 2:
            await send_line(conn, {"refused": {"reason": "the hello carried no stdin and stdout"}})
            return
        door = AttachedDoor(
            str(hello.get("door")), int(hello.get("pid") or 0), str(hello.get("cwd"))
        )
        attached: dict[str, Any] = {"hostPid": os.getpid(), "version": __version__}
        if relay:
            token = secrets.token_hex(16)
            self._relays[token] = asyncio.get_running_loop().create_future()
            attached["token"] = token
        await send_line(conn, {"attached": attached})
        self.doors.append(door)
        self._touch()
        status = 1
        served = False  # the door's client finished by itself (not cut off by the host)
        try:
            with door.scope:
                reader: Input
                if relay:  # a stream: the relay's socket (the fd handoff's pipes are faster)
                    reader, writer = await self._relay_streams(attached["token"])
                else:
                    in_fd, out_fd = os.dup(fds[0]), os.dup(fds[1])
                    reader, writer = await open_inbound(in_fd), await open_write_pipe(out_fd)
                async with anyio.create_task_group() as tg:
                    # The front door process is the server its client started: when it dies
                    # (killed by its editor), its client is done.
                    tg.start_soon(cancel_when_closed, conn, tg.cancel_scope)
                    log_start(
                        door.door,
                        self.data_dir,
                        f"attached, pid {door.pid}",
                        hello.get("options") or {},
                    )
                    status = await serve_door(
                        self.host,
                        door.door,
                        reader,
                        writer,
                        hello,
                        data_dir=self.data_dir,
                        say=front_door_says(conn, tg),
                    )
                    served = True
                    tg.cancel_scope.cancel()
                await self.host.turn_ends.settle()  # its sessions' ends are durable before it exits
        except Exception:
            log.exception("the %s door of pid %d failed", door.door, door.pid)
        finally:
            self.doors.remove(door)
            self._touch()
            with anyio.CancelScope(shield=True):
                try:
                    await send_line(conn, self._exit_message(status, served))
                except OSError:
                    pass  # the front door is gone; so is its client

    async def _relay_streams(self, token: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        future = self._relays[token]
        try:
            with anyio.fail_after(10):
                sock, rest = await future
        finally:
            self._relays.pop(token, None)
        reader, writer = await asyncio.open_connection(sock=sock)
        if rest:
            reader.feed_data(rest)
        return reader, writer

    def _take_relay(self, conn: socket.socket, token: str, rest: bytes) -> None:
        future = self._relays.get(token)
        if future is None or future.done():
            raise ValueError("unknown relay token")
        future.set_result((conn, rest))

    def _exit_message(self, status: int, served: bool) -> dict[str, Any]:
        """`{"exit": status}`, with `stopped` (H8) when the host cut the door off."""
        if served:
            return {"exit": status}
        log_path = self.data_dir / "host.log"
        why = self.stop_reason or f"exited unexpectedly (a fatal error); see {log_path}"
        return {"exit": 1, "stopped": why}

    def stop_doors(self) -> None:
        for door in list(self.doors):
            door.scope.cancel()

    def _store_refusal(self, hello: dict[str, Any]) -> str | None:
        """G1: a door whose store is not this host's is refused in one line naming both (a
        door would otherwise read and write another store than the one it was given)."""
        env = hello.get("env")
        wanted = env.get(STORE_ENV) if isinstance(env, dict) else None
        theirs = store_label(wanted if isinstance(wanted, str) and wanted else None)
        if theirs == self.store:
            return None
        return (
            f"the askbridge host of {self.data_dir} (pid {os.getpid()}) runs on {self.store}, "
            f"this front door was given {theirs}; stop the host with "
            f"`askbridge host --stop --data-dir {self.data_dir}` or give the door its store"
        )

    def status(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "version": __version__,
            "dataDir": str(self.data_dir),
            "socket": str(self.path),
            "mode": "inline" if self.inline else "host",
            "store": self.store,
            "doors": [{"door": d.door, "pid": d.pid, "cwd": d.cwd} for d in self.doors],
            "clients": len(self.host.clients),
            "sessions": sorted(self.host.sessions),
        }
