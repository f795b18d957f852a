"""`askbridge host`: the host of a data directory (H1, H6), normally started by a front door.

    askbridge host --data-dir D [--idle-exit S]    # serve until idle for S seconds (default 60)
    askbridge host --data-dir D --status           # pid, version, front doors, sessions
    askbridge host --data-dir D --stop             # stop it now, cleanly

The host takes the data directory's lock; a second host on the same directory
(front doors starting at once, H2) finds it taken while a host answers on
`host.sock` and exits 0 quietly. It exits cleanly — running turns end as at
end of input, the store is flushed, `host.sock` removed — once no front door
has been attached for `--idle-exit` seconds, or at `--stop` (H6); with exit
status 1 when its data directory is lost (S5). Its log (stdout and stderr,
`<data-dir>/host.log` when a front door starts it) holds INFO by default.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from askbridge.process.ctrl_c import CtrlCHeld, import_the_event_loop
from askbridge.process.hostsock import AttachError, connect, process_alive, request
from askbridge.process.paths import data_dir_of

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from askbridge.host.host import Host

    from .listener import HostSocket

STOP_WAIT_S = 10.0
LOCK_RACE_S = 2.0


def show_status(data_dir: str) -> int:
    answer = request(data_dir, {"status": True})
    if answer is None or "status" not in answer:
        print(f"no askbridge host is running for {data_dir}")
        return 1
    s = answer["status"]
    print(f"askbridge host pid {s['pid']}, version {s['version']}, data dir {s['dataDir']}")
    print(f"socket: {s.get('socket')}")  # H1: the path in use, also for a long data dir
    if s.get("store"):
        print(f"store: {s['store']}")  # G1
    doors = s.get("doors") or []
    print(f"front doors attached: {len(doors)}")
    for door in doors:
        print(f"  {door['door']} (pid {door['pid']}, cwd {door['cwd']})")
    sessions = s.get("sessions") or []
    print(f"sessions loaded: {len(sessions)}" + (f" ({', '.join(sessions)})" if sessions else ""))
    return 0


def stop_host(data_dir: str) -> int:
    answer = request(data_dir, {"stop": True})
    if answer is None or "stopping" not in answer:
        print(f"no askbridge host is running for {data_dir}")
        return 0
    pid = int(answer["stopping"])
    deadline = time.monotonic() + STOP_WAIT_S
    while time.monotonic() < deadline:
        if connect(data_dir) is None and not process_alive(pid):
            print(f"stopped the askbridge host (pid {pid})")
            return 0
        time.sleep(0.02)
    print(f"the askbridge host (pid {pid}) did not stop within {STOP_WAIT_S:g} s", file=sys.stderr)
    return 1


def _log_to_host_log(data_dir: Path) -> None:
    """Without --log-file the host logs to `<data-dir>/host.log` (0600), as its --help says:
    a front door that starts it points its stderr there already; by hand (a terminal), the
    log moves there and the terminal is told where it went."""
    import logging

    path = data_dir / "host.log"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        here, there = os.fstat(2), os.fstat(fd)
        if (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino):
            os.close(fd)
            return
    except OSError:
        pass
    from askbridge.process.log_lines import LineHandler

    root = logging.getLogger()
    for old in root.handlers:
        old.flush()  # what it kept goes where it was headed
    root.handlers[:] = [LineHandler(open(fd, "a", encoding="utf-8"), owned=True)]
    print(f"askbridge host: serving {data_dir}; the log is {path}", file=sys.stderr, flush=True)


def _a_host_answers(data_dir: str) -> bool:
    """A host answers on the socket within LOCK_RACE_S: the lock's winner binds it right
    after taking the lock; a holder that does not listen is not a host (an older askbridge)."""
    deadline = time.monotonic() + LOCK_RACE_S
    while time.monotonic() < deadline:
        sock = connect(data_dir)
        if sock is not None:
            sock.close()
            return True
        time.sleep(0.02)
    return False


def run_host(args: argparse.Namespace) -> int:
    try:
        return _run_host(args)
    except AttachError as exc:  # H1: the socket's folder refused
        print(f"askbridge host: {exc}", file=sys.stderr)
        return 1


def _run_host(args: argparse.Namespace) -> int:
    data_dir = data_dir_of(args.data_dir)
    if args.status:
        return show_status(data_dir)
    if args.stop:
        return stop_host(data_dir)
    ctrl_c = CtrlCHeld()  # by hand, Ctrl-C while the start imports: ctrl_c.py says why
    with ctrl_c:
        from askbridge.core import StoreError
        from askbridge.host.store.datadir import open_store

        from .front import door_defaults
        from .inline import close_unserved
    if ctrl_c.pressed:
        raise KeyboardInterrupt  # the caller's Ctrl-C: status 130 (cli/entry.py, cli/commands.py)
    url = getattr(args, "store", None)  # G1: a team store opens in the event loop
    try:
        store = open_store(data_dir) if url is None else None
    except StoreError as exc:
        if _a_host_answers(data_dir):
            # H2: another host won the race for the lock (front doors attach to it; they
            # look at the socket, not at this status). Said, and not 0: by hand, this
            # host did not start.
            answer = request(data_dir, {"status": True}) or {}
            pid = (answer.get("status") or {}).get("pid", "?")
            print(
                f"askbridge host: {data_dir} is already served by the host pid {pid}; "
                f"`askbridge host --stop --data-dir {data_dir}` stops it",
                file=sys.stderr,
            )
            return 1
        print(f"askbridge host: {exc}", file=sys.stderr)
        return 1
    if store is None:  # the team store's host: host.log goes in the data dir all the same
        from askbridge.process.paths import make_private_dir

        problem = make_private_dir(data_dir)
        if problem is not None:
            print(f"askbridge host: {problem}", file=sys.stderr)
            return 1
    with ctrl_c:
        if not args.log_file:
            _log_to_host_log(Path(data_dir))
        from askbridge.process.hostsock import bind_host_socket

        # At once: racing front doors wait for it (H2). A team store's host binds it once
        # its store is open (which holds the data directory as SQLite's open does).
        sock = bind_host_socket(Path(data_dir)) if store is not None else None
        import logging

        import anyio

        import_the_event_loop()
    log = logging.getLogger("askbridge.daemon")
    if ctrl_c.pressed:
        if sock is not None:
            sock.close()
        if store is not None:
            close_unserved(store)
        raise KeyboardInterrupt  # the caller's Ctrl-C: status 130 (cli/entry.py, cli/commands.py)
    try:
        # `_serve` closes the store
        status = anyio.run(
            _serve, store, url, Path(data_dir), door_defaults(args), args.idle_exit, sock
        )
    except Exception:
        log.exception("stopping: fatal error")  # H6: host.log says why it stopped
        status = 1
    log.info("askbridge host pid %d stopped (status %d)", os.getpid(), status)
    return status


async def _serve(
    store: Any,
    url: str | None,
    data_dir: Path,
    defaults: dict[str, Any],
    idle_exit: float,
    sock: Any,
) -> int:
    if store is None:  # the team store (G1): its driver is async
        from askbridge.process.hostsock import bind_host_socket

        from .inline import open_team_store

        store = await open_team_store(data_dir, url, "askbridge host")
        if store is None:
            return 1
        try:
            sock = bind_host_socket(data_dir)
        except BaseException:
            await store.close()
            raise
    try:
        return await _serve_store(store, data_dir, defaults, idle_exit, sock)
    finally:
        await store.close()


async def _serve_store(
    store: Any, data_dir: Path, defaults: dict[str, Any], idle_exit: float, sock: Any
) -> int:
    import logging

    from askbridge import __version__
    from askbridge.host.options import HostSettings

    from .bootstrap import serve_host
    from .doors import stop_on_signals

    settings = HostSettings.over_defaults(defaults)

    async def until_stopped(host: Host, listener: HostSocket, tg: TaskGroup) -> None:
        logging.getLogger("askbridge.daemon").info(
            "askbridge host %s for %s, pid %d, idle exit %g s",
            __version__,
            data_dir,
            os.getpid(),
            idle_exit,
        )
        tg.start_soon(_exit_when_idle, listener, idle_exit, tg.cancel_scope)
        tg.start_soon(stop_on_signals, tg.cancel_scope, listener)

    return await serve_host(store, data_dir, settings, sock, until_stopped, inline=False)


async def _exit_when_idle(listener: Any, idle_exit: float, scope: Any) -> None:
    """H6: stop once no front door has been attached for `idle_exit` seconds."""

    import anyio

    while True:
        if listener.doors:
            await listener.changed.wait()
            continue
        with anyio.move_on_after(idle_exit) as idle:
            await listener.changed.wait()
        if idle.cancelled_caught and not listener.doors:
            listener.stopping(f"idle for {idle_exit:g} s", "stopped after being idle")
            scope.cancel()
            return
