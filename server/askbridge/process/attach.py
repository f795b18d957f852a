"""The front-door side of H2/H4: find or start the data directory's host, hand it our stdio, wait.

`askbridge serve|acp|mcp --host auto` (the default) runs `attach(...)`:

1. check that the data directory is this user's and that only this user may write
   it, connect to `<data-dir>/host.sock` (or, for a data dir too long for a socket
   path, the one `socket_path` names, H1), and check that its listener runs as this
   user (`SO_PEERCRED`); otherwise refuse in one line, having sent nothing and made
   nothing in the directory (S13). When nothing listens there, start
   `askbridge host --data-dir D` detached (its own session, stdio on
   `<data-dir>/host.log`) and wait for the socket, at most 10 s (H2). Front
   doors starting at the same moment start one host between them: the hosts
   race for the data directory's lock, the losers exit, everyone attaches;
2. send `{"hello": {door, version, options, cwd, env, pid}}` with our stdin
   and stdout attached (SCM_RIGHTS, H4) and close our own copies, so the
   client sees the host's bytes only and end of output when the host is done;
3. read `{"attached": …}` — or `{"refused": {reason}}` (H7: another version),
   printed as one line, exit 1 — then wait for `{"exit": status}` and exit
   with it. The socket closing without it means the host died: exit 1 (H8).

Where descriptors cannot be passed (`socket.send_fds` is missing or refused,
or `ASKBRIDGE_RELAY=1`), the hello says `"relay": true` and this process
copies bytes between its stdio and a second connection instead.

Standard library only, and of askbridge's nothing but `askbridge.process.hostsock` (a
standard-library-only leaf: the socket's path and its JSON lines, which
`askbridge host --status | --stop` and the test harness use too) and `askbridge.process.paths`
(another: the data directory's rules, the host's own): attaching is what an editor
waits for on every start (benchmarks/bench_bridge_startup.py), so its sockets and JSON
are hostsock's, on the C modules (that module says what this buys), and no `typing`.
"""

from __future__ import annotations

import os
import sys
import time

from askbridge.process.hostsock import (
    CAN_SEND_FDS,
    SHUT_WR,
    AttachError,
    Lines,
    connect,
    send_line,
    socket_path,
)
from askbridge.process.paths import make_private_dir, private_dir_problem

TYPE_CHECKING = False  # not `typing`'s: see the module docstring (mypy knows the name)
if TYPE_CHECKING:
    import subprocess
    from typing import Any

    from askbridge.process.hostsock import Socket

HOST_MODES = ("auto", "inline")
DEFAULT_HOST_MODE_ENV = "ASKBRIDGE_HOST"  # changes the default of `--host`
LOG_NAME = "host.log"
START_TIMEOUT_S = 10.0
_POLL_S = 0.01


_started: subprocess.Popen[bytes] | None = None  # the host this front door started, if any


def default_host_mode() -> str:
    """`--host`'s default: `$ASKBRIDGE_HOST` when it names a mode, else `auto`."""
    mode = os.environ.get(DEFAULT_HOST_MODE_ENV, "auto")
    return mode if mode in HOST_MODES else "auto"


def _start_host(data_dir: str, idle_exit: float | None, log: list[str]) -> subprocess.Popen[bytes]:
    import subprocess  # only a front door that starts the host needs it

    problem = make_private_dir(data_dir)  # S13: host.log goes in no directory of someone else's
    if problem is not None:
        raise AttachError(problem)
    log_fd = os.open(
        os.path.join(data_dir, LOG_NAME),
        os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC,
        0o600,
    )
    command = [sys.executable, "-m", "askbridge.cli", "host", "--data-dir", data_dir]
    if idle_exit is not None:
        command += ["--idle-exit", str(idle_exit)]
    command += log
    try:
        return subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log_fd,
            stderr=log_fd,
            start_new_session=True,  # not in the editor's process group: its Ctrl-C is not ours
            close_fds=True,
        )
    finally:
        os.close(log_fd)


def connect_or_start(
    data_dir: str, idle_exit: float | None = None, log: list[str] | None = None
) -> Socket:
    """H2: the host's socket, starting a host first when none runs (with `log`: the
    front door's `--log-file`/`--log-level`, which a host it starts takes over).
    S13: AttachError, before anything is sent or made, when the data directory (the
    socket's folder) is not ours alone, or the socket's listener another uid's."""
    problem = private_dir_problem(data_dir, missing_ok=True)
    if problem is not None:
        raise AttachError(problem)
    sock = connect(data_dir)
    if sock is not None:
        return sock
    started = _start_host(data_dir, idle_exit, log or [])
    global _started
    _started = started
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        sock = connect(data_dir)
        if sock is not None:
            return sock
        # A host that lost the race for the lock exits 0; the winner is still coming. One
        # that failed (the data directory unusable, held by something that is no host)
        # has said why in its log.
        if started.poll() not in (None, 0):
            sock = connect(data_dir)  # one that lost the race says so, and exits 1 (H2)
            if sock is not None:
                return sock
            raise AttachError(_log_tail(data_dir))
        time.sleep(_POLL_S)
    raise AttachError(
        f"no askbridge host answered on {socket_path(data_dir)} within {START_TIMEOUT_S:g} s; "
        f"see {os.path.join(data_dir, LOG_NAME)}"
    )


def _log_tail(data_dir: str) -> str:
    try:
        with open(os.path.join(data_dir, LOG_NAME), encoding="utf-8", errors="replace") as log:
            lines = [line.strip() for line in log.read().splitlines() if line.strip()]
    except OSError:
        lines = []
    last = lines[-1].removeprefix("askbridge host: ") if lines else ""
    return last or f"the askbridge host for {data_dir} could not start"


def _host_status(pid: object) -> str:
    """How the host ended, as far as this front door can tell: its exit status when this
    process started it (it is our child), else only its pid."""
    if _started is not None and _started.pid == pid:
        try:
            code = _started.wait(5)
        except Exception:  # still running after 5 s: a host that closed our socket
            return f"pid {pid}"
        return f"killed by signal {-code}" if code < 0 else f"status {code}"
    return f"pid {pid}"


def _can_pass_fds() -> bool:
    return CAN_SEND_FDS and os.environ.get("ASKBRIDGE_RELAY") != "1"


def _hand_over_stdio() -> None:
    """Our stdin and stdout now belong to the host: drop our copies (stdout EOF is its)."""
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os.close(devnull)


def _relay(data_dir: str, token: str) -> None:
    """Copy our stdio to and from a data connection, for a host that cannot take fds."""
    data = connect(data_dir)
    if data is None:
        raise AttachError("the host went away before the relay connection")
    send_line(data, {"relay": token})

    def pump_in() -> None:
        try:
            while chunk := os.read(0, 65536):
                data.sendall(chunk)
        except OSError:
            pass
        finally:
            try:
                data.shutdown(SHUT_WR)
            except OSError:
                pass

    import threading  # only relay mode copies bytes

    threading.Thread(target=pump_in, daemon=True).start()
    try:
        while chunk := data.recv(65536):
            view = memoryview(chunk)
            while view:
                view = view[os.write(1, view) :]
    except OSError:
        pass


def attach(
    door: str,
    data_dir: str,
    options: dict[str, Any],
    version: str,
    idle_exit: float | None,
    log: list[str] | None = None,
) -> int:
    """Serve this process's client through the host (see the module docstring)."""
    command = {"lsp": "serve"}.get(door, door)  # what the user typed, for messages
    try:
        sock = connect_or_start(data_dir, idle_exit, log)
    except (AttachError, OSError) as exc:
        print(f"askbridge {command}: {exc}", file=sys.stderr)
        return 1
    relay = not _can_pass_fds()
    hello = {
        "door": door,
        "version": version,
        "options": options,
        "cwd": os.getcwd(),
        "env": dict(os.environ),
        "pid": os.getpid(),
    }
    try:
        if relay:
            send_line(sock, {"hello": {**hello, "relay": True}})
        else:
            send_line(sock, {"hello": hello}, [0, 1])
            _hand_over_stdio()
        lines = Lines(sock)
        answer = lines.next()
        if answer is None:
            print(f"askbridge {command}: the host closed the connection", file=sys.stderr)
            return 1
        if "refused" in answer:
            print(f"askbridge {command}: {answer['refused'].get('reason')}", file=sys.stderr)
            return 1
        copier: Any = None  # a threading.Thread, in relay mode only
        if relay:
            import threading

            token = str(answer.get("attached", {}).get("token", ""))
            copier = threading.Thread(target=_relay, args=(data_dir, token), daemon=True)
            copier.start()
        while (message := lines.next()) is not None:
            if "say" in message:  # a line for the client's eyes (input that is not LSP)
                print(f"askbridge {command}: {message['say']}", file=sys.stderr, flush=True)
            if "exit" in message:
                if copier is not None:
                    copier.join(5)  # the last bytes reach the client before we exit
                if "stopped" in message:  # H8: the host cut us off; say why
                    print(
                        f"askbridge {command}: the host of {data_dir} {message['stopped']}",
                        file=sys.stderr,
                    )
                    return 1
                status = message["exit"]
                return status if isinstance(status, int) else 1
        host_pid = answer.get("attached", {}).get("hostPid")
        print(
            f"askbridge {command}: the host of {data_dir} exited unexpectedly "
            f"({_host_status(host_pid)}); see {os.path.join(data_dir, LOG_NAME)}",
            file=sys.stderr,
        )
        return 1  # H8: the host died
    except (OSError, ValueError) as exc:
        print(f"askbridge {command}: lost the host: {exc}", file=sys.stderr)
        return 1
    finally:
        sock.close()


def attach_refusal(data_dir: str) -> str | None:
    """Why a front door cannot attach with `data_dir` (one line, as the inline host words it),
    or None: the directory is made here (0700, as the host makes it), and one that cannot
    be written is fine only while a host serves it (attaching writes nothing there)."""
    try:
        os.makedirs(data_dir, mode=0o700, exist_ok=True)
    except OSError as exc:
        return f"cannot create data directory {data_dir}: {exc.strerror or exc}"
    if os.access(data_dir, os.W_OK | os.X_OK):
        return None
    try:
        sock = connect(data_dir, 1.0)
    except AttachError as exc:  # S13: another uid listens there
        return str(exc)
    except OSError:
        sock = None
    if sock is not None:
        sock.close()
        return None
    try:
        read_only = bool(os.statvfs(data_dir).f_flag & os.ST_RDONLY)
    except OSError:
        read_only = False
    why = "it is on a read-only file system" if read_only else "it is not writable"
    return f"cannot use data directory {data_dir}: {why}, and no askbridge host serves it"
