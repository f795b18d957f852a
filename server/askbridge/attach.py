"""The front-door side of H2/H4: find or start the data directory's host, hand it our stdio, wait.

`askbridge serve|acp|mcp --host auto` (the default) runs `attach(...)`:

1. connect to `<data-dir>/host.sock` (or, for a data dir too long for a socket path, the
   one `socket_path` names, H1); when nothing listens there, start
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

Standard library only, and nothing of askbridge's but the version: attaching
is what an editor waits for on every start (benchmarks/bench_bridge_startup.py).
For the same reason it uses the C modules under `socket` and `json` (`_socket`,
`_json`) and no `typing`: the Python modules import `re`, `enum`, `selectors`
and `functools`, which cost more than the rest of an attach together (~15 ms
of ~30 ms, measured). Their behaviour here is the same: compact JSON lines,
ASCII-escaped, and fds passed as SCM_RIGHTS ancillary data.
"""

from __future__ import annotations

import _json
import _socket
import os
import sys
import time
from struct import pack

TYPE_CHECKING = False  # not `typing`'s: see the module docstring (mypy knows the name)
if TYPE_CHECKING:
    import subprocess
    from typing import Any

    Socket = _socket.socket

HOST_MODES = ("auto", "inline")
DEFAULT_HOST_MODE_ENV = "ASKBRIDGE_HOST"  # changes the default of `--host`
SOCKET_NAME = "host.sock"
LOG_NAME = "host.log"
START_TIMEOUT_S = 10.0
_POLL_S = 0.01


_started: subprocess.Popen[bytes] | None = None  # the host this front door started, if any


class AttachError(Exception):
    """The host could not be reached or started; the message says what to do."""


def default_host_mode() -> str:
    """`--host`'s default: `$ASKBRIDGE_HOST` when it names a mode, else `auto`."""
    mode = os.environ.get(DEFAULT_HOST_MODE_ENV, "auto")
    return mode if mode in HOST_MODES else "auto"


# The longest unix socket path the platform binds: sun_path less its terminating NUL.
MAX_SOCKET_PATH = 103 if sys.platform == "darwin" else 107


def socket_path(data_dir: str, create: bool = False) -> str:
    """H1: `<data-dir>/host.sock`, or, where that would not fit the platform's unix socket
    path, `askbridge-<uid>/<hash of the data dir's real path>.sock` in `$XDG_RUNTIME_DIR`
    else the system temporary directory (else `/tmp`, when even that is too long). Every
    command finds the socket through this one function. The folder must be 0700 and this
    user's (one another user made first could hold a socket that is not our host's):
    AttachError otherwise. `create`: the
    binding host makes the folder when it is missing; the others only check it."""
    path = os.path.join(data_dir, SOCKET_NAME)
    if len(os.fsencode(path)) <= MAX_SOCKET_PATH:
        return path
    import hashlib  # only a long data dir needs it; an attach's start-up stays short
    import tempfile

    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    base = runtime if os.path.isabs(runtime) and os.path.isdir(runtime) else tempfile.gettempdir()
    folder = os.path.join(base, f"askbridge-{os.getuid()}")
    if len(os.fsencode(folder)) + 38 > MAX_SOCKET_PATH:  # a long $TMPDIR too: /tmp is short
        folder = os.path.join("/tmp", f"askbridge-{os.getuid()}")
    if create:
        try:
            os.mkdir(folder, 0o700)
        except FileExistsError:
            pass
        except OSError as exc:
            raise AttachError(f"cannot create the socket folder {folder}: {exc}") from exc
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise AttachError(f"cannot use the socket folder {folder}: {exc}") from exc
    if st is not None:
        import stat

        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
            raise AttachError(f"refusing the socket folder {folder}: it is not a folder of yours")
        if st.st_mode & 0o077:
            raise AttachError(
                f"refusing the socket folder {folder}: it is open to group or others "
                f"(mode {st.st_mode & 0o777:o}, must be 700)"
            )
    digest = hashlib.sha256(os.fsencode(os.path.realpath(data_dir))).hexdigest()[:32]
    return os.path.join(folder, f"{digest}.sock")


def connect(data_dir: str) -> Socket | None:
    """A connection to the running host of `data_dir`, or None when none listens."""
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.connect(socket_path(data_dir))
    except (FileNotFoundError, ConnectionRefusedError):
        sock.close()
        return None
    except OSError:
        sock.close()
        raise
    return sock


def _start_host(data_dir: str, idle_exit: float | None, log: list[str]) -> subprocess.Popen[bytes]:
    import subprocess  # only a front door that starts the host needs it

    os.makedirs(data_dir, mode=0o700, exist_ok=True)
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
    front door's `--log-file`/`--log-level`, which a host it starts takes over)."""
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


def _unencodable(value: object) -> object:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


_encode = _json.make_encoder(
    None, _unencodable, _json.encode_basestring_ascii, None, ":", ",", False, False, True
)


class _ScanContext:
    """What `_json.make_scanner` reads off a `json.JSONDecoder`: the defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = float
    memo: dict[str, str] = {}


_scan = _json.make_scanner(_ScanContext())  # type: ignore[arg-type]  # typeshed wants a scanner


def dumps(message: dict[str, Any]) -> str:
    """`json.dumps(message, separators=(",", ":"))`."""
    return "".join(_encode(message, 0))


def loads(line: bytes) -> Any:
    """`json.loads` of one compact JSON line; ValueError when it is not JSON."""
    try:
        value, _end = _scan(line.decode(), 0)
    except (StopIteration, UnicodeDecodeError) as exc:
        raise ValueError(f"not a JSON line: {line[:80]!r}") from exc
    return value


def _send_line(sock: Socket, message: dict[str, Any], fds: list[int] | None = None) -> None:
    data = (dumps(message) + "\n").encode()
    if fds:
        rights = [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, pack(f"{len(fds)}i", *fds))]
        sent = sock.sendmsg([data], rights)
        data = data[sent:]
    if data:
        sock.sendall(data)


class _Lines:
    def __init__(self, sock: Socket) -> None:
        self._sock = sock
        self._buf = b""

    def next(self) -> dict[str, Any] | None:
        while b"\n" not in self._buf:
            chunk = self._sock.recv(65536)
            if not chunk:
                return None
            self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        value = loads(line)
        return value if isinstance(value, dict) else {}


def _can_pass_fds() -> bool:
    return hasattr(_socket.socket, "sendmsg") and os.environ.get("ASKBRIDGE_RELAY") != "1"


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
    _send_line(data, {"relay": token})

    def pump_in() -> None:
        try:
            while chunk := os.read(0, 65536):
                data.sendall(chunk)
        except OSError:
            pass
        finally:
            try:
                data.shutdown(_socket.SHUT_WR)
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
            _send_line(sock, {"hello": {**hello, "relay": True}})
        else:
            _send_line(sock, {"hello": hello}, [0, 1])
            _hand_over_stdio()
        lines = _Lines(sock)
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
