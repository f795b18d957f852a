"""Host modes for tests: which one a harness starts, and leaving no host behind (H2, H3).

The harness starts `askbridge serve` with `--host inline` (the process is its
own host, gone with it) unless `ASKBRIDGE_HOST=auto` asks for the real
front-door path: then the server attaches to a host of its data directory,
started detached on demand, which outlives the front door until it idles out.
`stop_host(data_dir)` stops such a host at once and waits for it to be gone;
`kill_host(data_dir)` crashes it (SIGKILL), as a crash test wants. Both work
from the outside only: the host socket and the pid in `askbridge.lock` (only while
that lock is held: a dead host's pid may be another process's by then).
"""

from __future__ import annotations

import fcntl
import os
import signal
import time
from pathlib import Path

from askbridge.process.attach import DEFAULT_HOST_MODE_ENV
from askbridge.process.hostsock import process_alive, request, socket_path

GONE_TIMEOUT_S = 10.0


def harness_host_mode() -> str:
    """`inline` unless `ASKBRIDGE_HOST` says `auto` (H3: tests use inline by default)."""
    return "auto" if os.environ.get(DEFAULT_HOST_MODE_ENV) == "auto" else "inline"


def host_pid(data_dir: str | Path) -> int | None:
    """The pid holding `data_dir`'s lock (the host), or None."""
    try:
        text = (Path(data_dir) / "askbridge.lock").read_text()
    except OSError:
        return None
    first = text.partition("\n")[0].strip()
    return int(first) if first.isdigit() else None


def holder_pid(data_dir: str | Path) -> int | None:
    """The pid in `askbridge.lock` while a process holds the lock, else None.

    A host killed with SIGKILL leaves its lock file (and host.sock) behind with its pid
    in it, and that pid is soon another process's: pids are reused quickly (32768 of
    them on many Linux systems, and a test run starts thousands of processes, several
    test processes at once under pytest-xdist). Only a held lock vouches for the pid;
    a shared-lock probe tells, without a process list."""
    try:
        fd = os.open(Path(data_dir) / "askbridge.lock", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return host_pid(data_dir)
    except OSError:
        return None
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


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
        answer = request(str(data_dir), {"status": True}, GONE_TIMEOUT_S)
    except (OSError, ValueError):
        return None
    status = (answer or {}).get("status")
    return status if isinstance(status, dict) else None


def wait_status(
    data_dir: str | Path, doors: int = 0, timeout: float = 2 * GONE_TIMEOUT_S
) -> dict[str, object]:
    """The host's `--status` answer once it answers with at least `doors` front doors
    attached: a real process starting, polled (there is no clock to inject). TimeoutError
    when `timeout` passes first."""
    deadline = time.monotonic() + timeout
    while True:
        status = host_status(data_dir)
        attached = status.get("doors") if status is not None else None
        if status is not None and len(attached if isinstance(attached, list) else []) >= doors:
            return status
        if time.monotonic() > deadline:
            raise TimeoutError(f"no host with {doors} front doors for {data_dir} in {timeout:g} s")
        time.sleep(0.02)


def stop_idle_host(data_dir: str | Path) -> None:
    """Stop the host process of `data_dir` once no front door is attached to it; leave an
    inline host (another client's own process) and a host still serving someone alone."""
    status = host_status(data_dir)
    if status is not None and status.get("mode") == "host" and not status.get("doors"):
        stop_host(data_dir)


def stop_host(data_dir: str | Path, timeout: float = GONE_TIMEOUT_S) -> None:
    """Stop the host of `data_dir` if one runs (`{"stop": true}`, then SIGKILL if it lingers)."""
    sock_path = Path(socket_path(str(data_dir)))
    pid = holder_pid(data_dir)
    if sock_path.exists():
        try:
            stopping = (request(str(data_dir), {"stop": True}, timeout) or {}).get("stopping")
            pid = int(stopping) if isinstance(stopping, int) else pid
        except (OSError, ValueError):
            pass
    if pid is None or pid == os.getpid():
        return
    # Killed only while it still holds the lock: gone from it, the pid may be reused.
    if not wait_gone(pid, timeout) and holder_pid(data_dir) == pid:
        kill_pid(pid)


def kill_pid(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    wait_gone(pid)


def kill_host(data_dir: str | Path) -> int | None:
    """SIGKILL the host of `data_dir` (a crash: nothing flushed); its pid, or None."""
    pid = holder_pid(data_dir)
    if pid is not None and pid != os.getpid():
        kill_pid(pid)
    return pid
