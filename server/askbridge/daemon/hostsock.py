"""Binding the host socket (H1): `<data-dir>/host.sock`, or for a data dir too long for a
unix socket path the one `askbridge.attach.socket_path` names. Standard library only, so an
inline front door binds it before it answers its client's first `initialize` (before the
heavy imports)."""

from __future__ import annotations

import logging
import os
import socket
from pathlib import Path

from askbridge.attach import socket_path

log = logging.getLogger("askbridge.daemon")


def bind_host_socket(data_dir: Path) -> socket.socket:
    """The host socket, bound 0600 and listening (H1). Call it holding the lock: a socket
    file found there is a dead host's (H2). AttachError when its folder is refused."""
    path = Path(socket_path(str(data_dir), create=True))
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        sock.bind(str(path))
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    sock.listen(64)
    sock.setblocking(False)
    log.info("listening on %s", path)
    return sock
