"""Host modes for tests: which one a harness starts, and leaving no host behind (H2, H3).

The harness starts `askbridge serve` with `--host inline` (the process is its
own host, gone with it) unless `ASKBRIDGE_HOST=auto` asks for the real
front-door path: then the server attaches to a host of its data directory,
started detached on demand, which outlives the front door until it idles out.
`stop_host(data_dir)` stops such a host at once and waits for it to be gone;
`kill_host(data_dir)` crashes it (SIGKILL), as a crash test wants. Both work
from the outside only: the host socket and the pid in `askbridge.lock`.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import time
from pathlib import Path

from askbridge.attach import DEFAULT_HOST_MODE_ENV, socket_path
from askbridge.daemon.main import process_alive

HOST_MODE_ENV = DEFAULT_HOST_MODE_ENV
GONE_TIMEOUT_S = 10.0


def harness_host_mode() -> str:
    """`inline` unless `ASKBRIDGE_HOST` says `auto` (H3: tests use inline by default)."""
    return "auto" if os.environ.get(HOST_MODE_ENV) == "auto" else "inline"


def host_pid(data_dir: str | Path) -> int | None:
    """The pid holding `data_dir`'s lock (the host), or None."""
    try:
        text = (Path(data_dir) / "askbridge.lock").read_text()
    except OSError:
        return None
    first = text.partition("\n")[0].strip()
    return int(first) if first.isdigit() else None


def wait_gone(pid: int, timeout: float = GONE_TIMEOUT_S) -> bool:
    deadline = time.monotonic() + timeout
    while process_alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def host_status(data_dir: str | Path) -> dict[str, object] | None:
    """The running host's `--status` answer, or None when none listens."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(GONE_TIMEOUT_S)
            sock.connect(socket_path(str(data_dir)))
            sock.sendall(b'{"status": true}\n')
            data = b""
            while b"\n" not in data:
                chunk = sock.recv(65536)
                if not chunk:
                    return None
                data += chunk
    except (OSError, ValueError):
        return None
    status = json.loads(data.partition(b"\n")[0]).get("status")
    return status if isinstance(status, dict) else None


def stop_idle_host(data_dir: str | Path) -> None:
    """Stop the host process of `data_dir` once no front door is attached to it; leave an
    inline host (another client's own process) and a host still serving someone alone."""
    status = host_status(data_dir)
    if status is not None and status.get("mode") == "host" and not status.get("doors"):
        stop_host(data_dir)


def stop_host(data_dir: str | Path, timeout: float = GONE_TIMEOUT_S) -> None:
    """Stop the host of `data_dir` if one runs (`{"stop": true}`, then SIGKILL if it lingers)."""
    sock_path = Path(socket_path(str(data_dir)))
    pid = host_pid(data_dir)
    if sock_path.exists():
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(timeout)
                sock.connect(str(sock_path))
                sock.sendall(json.dumps({"stop": True}).encode() + b"\n")
                answer = sock.recv(4096)
            stopping = json.loads(answer.partition(b"\n")[0]).get("stopping") if answer else None
            pid = int(stopping) if isinstance(stopping, int) else pid
        except (OSError, ValueError):
            pass
    if pid is None or pid == os.getpid():
        return
    if not wait_gone(pid, timeout):
        kill_pid(pid)


def kill_pid(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    wait_gone(pid)


def kill_host(data_dir: str | Path) -> int | None:
    """SIGKILL the host of `data_dir` (a crash: nothing flushed); its pid, or None."""
    pid = host_pid(data_dir)
    if pid is not None and pid != os.getpid():
        kill_pid(pid)
    return pid
