"""One accepted `host.sock` connection, from the host's side: JSON lines over a non-blocking socket.

Who is calling (`peer_of`, SO_PEERCRED), its first message with the descriptors
sent along (SCM_RIGHTS), answering it, and noticing when the front door goes
away. Separate from `HostSocket` (listener.py), which decides what each message
means, because this is the byte-level half of protocol.md "The host socket";
and from `askbridge.process.hostsock`, which is the blocking client's end (standard
library only, for start-up time), while this end waits in the host's event loop.
"""

from __future__ import annotations

import json
import os
import socket
import struct
from typing import Any

import anyio

from askbridge.process.hostsock import dumps

MAX_FIRST_LINE = 4 * 1024 * 1024  # a hello carries the front door's environment
_PEERCRED = struct.Struct("3i")


def peer_of(conn: socket.socket) -> tuple[int, int]:
    """The (pid, uid) of the process at the other end of `conn`."""
    pid, uid, _ = _PEERCRED.unpack(
        conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _PEERCRED.size)
    )
    return pid, uid


async def read_first_line(conn: socket.socket) -> tuple[dict[str, Any], list[int], bytes]:
    """The first message of a connection, the descriptors sent with it, and what followed."""
    buf, fds = b"", []
    with anyio.fail_after(10):
        while b"\n" not in buf:
            await anyio.wait_readable(conn)
            try:
                data, got, _, _ = socket.recv_fds(conn, 65536, 2)
            except BlockingIOError:
                continue
            fds.extend(got)
            if not data:
                raise ValueError("the connection closed before its first message")
            buf += data
            if len(buf) > MAX_FIRST_LINE:
                raise ValueError("first message too long")
    line, _, rest = buf.partition(b"\n")
    message = json.loads(line)
    if not isinstance(message, dict):
        raise ValueError("the first message is not an object")
    return message, fds, rest


async def cancel_when_closed(conn: socket.socket, scope: anyio.CancelScope) -> None:
    """Cancel `scope` once the other end closes `conn` (or it fails)."""
    while True:
        await anyio.wait_readable(conn)
        try:
            if not conn.recv(4096):
                scope.cancel()
                return
        except BlockingIOError:
            continue
        except OSError:
            scope.cancel()
            return


async def send_line(conn: socket.socket, message: dict[str, Any]) -> None:
    """`message` as one compact JSON line, waiting while the socket is full."""
    data = (dumps(message) + "\n").encode()
    view = memoryview(data)
    while view:
        await anyio.wait_writable(conn)
        try:
            view = view[conn.send(view) :]
        except BlockingIOError:
            continue


def close_quietly(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass
