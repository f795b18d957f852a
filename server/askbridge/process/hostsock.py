"""`<data-dir>/host.sock` from both ends: where it is (H1), binding it, and its one client.

Every process that reaches a host goes through here: a front door attaching
(`askbridge.process.attach`), `askbridge host --status | --stop` (`daemon/main.py`), and the
test harness (`askbridge.testing.hosts`); so `connect` is where a listener of another
uid is refused (S13). The host socket's messages are compact
JSON lines (protocol.md "The host socket"); `request` is one message and its answer.

Standard library only, importing nothing of ours (tests/unit/test_layers.py, LEAVES);
whatever needs more imports it inside the function that needs it.

The one place askbridge uses the C modules under `socket` and `json` (`_socket`,
`_json`) instead of the modules themselves: what it buys is start-up time. Attaching
(attach.py) is what an editor waits for on every start, and an inline host holds its
data directory and answers `initialize` before its heavy imports (lsp/early.py,
host/store/datadir_guard.py); all of them take their sockets and JSON from here.
`socket` converts its constants to enums and brings `selectors`; `json` brings `re`.
Measured on the attach path (a 2-core machine under load, `askbridge serve` attaching
to a running host, to its exit): the public modules cost 33.6 million more instructions
(callgrind; the whole attach is 46.3 million), and the minimum of 40 runs went from
15.6 ms to 26.8 ms, where target (d)'s baseline `python -c "import pygls"` took 10.7 ms
(benchmarks/bench_bridge_startup.py: attached <= 1.5x). The behaviour is the modules':
`dumps`/`dumps_text` encode as `json.dumps` with compact separators, `loads` decodes
as `json.loads`, and descriptors go as SCM_RIGHTS ancillary data. No `typing` either:
it brings `re` too, 30.9 million instructions in all.

For the same reason `sha256` (the inline host's guard name, datadir_guard.py) is the
interpreter's own C module (`_sha2`, `_sha256` in 3.11), not `hashlib`, whose OpenSSL
module alone took ~2.4 ms of the ~3 ms `hashlib` costs (`python -X importtime`, against
~0.2 ms): the inline host's `initialize` answer read 2.0-2.1x `import pygls` with
`hashlib` (target (d): <= 2x), 1.5x before.
"""

from __future__ import annotations

import _json
import _socket
import os
import sys
from struct import calcsize, pack, unpack

TYPE_CHECKING = False  # not `typing`'s: see the module docstring (mypy knows the name)
if TYPE_CHECKING:
    import socket
    from typing import Any

    Socket = _socket.socket
    from hashlib import sha256 as sha256  # the same digest, typed
else:  # datadir_guard.py's, from here: the module docstring says why these modules
    try:
        from _sha2 import sha256  # Python 3.12 and later
    except ImportError:
        try:
            from _sha256 import sha256  # Python 3.11
        except ImportError:  # built without its own sha256: OpenSSL's, the same digest
            from hashlib import sha256  # noqa: F401

SOCKET_NAME = "host.sock"
# The longest unix socket path the platform binds: sun_path less its terminating NUL.
MAX_SOCKET_PATH = 103 if sys.platform == "darwin" else 107

SHUT_WR = _socket.SHUT_WR
# Whether descriptors can be handed over (SCM_RIGHTS); attach.py relays bytes where not.
CAN_SEND_FDS = hasattr(_socket.socket, "sendmsg")


def unix_socket() -> Socket:
    """A new unix stream socket (`socket.socket(AF_UNIX, SOCK_STREAM)`, as `_socket`'s)."""
    return _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)


def peer_credentials(sock: Socket) -> tuple[int, int, int]:
    """(pid, uid, gid) of the process at the other end of a connected unix socket."""
    pid, uid, gid = unpack(
        "3i", sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, calcsize("3i"))
    )
    return pid, uid, gid


class AttachError(Exception):
    """The host could not be reached or started; the message says what to do."""


def socket_path(data_dir: str, create: bool = False) -> str:
    """H1: `<data-dir>/host.sock`, whatever the data dir's length where `/proc/self/fd`
    exists (Linux): a path too long for a unix socket address is bound and reached
    through a descriptor of its folder (`_bind_or_connect`), so the socket stays in the
    private data directory and no folder elsewhere exists for another user to take
    first. Elsewhere, such a socket is `askbridge-<uid>/<hash of the data dir's real
    path>.sock` in `$XDG_RUNTIME_DIR` else the system temporary directory (else `/tmp`,
    when even that is too long). Every command finds the socket through this one
    function. That folder must be 0700 and this user's (one another user made first
    could hold a socket that is not our host's): AttachError otherwise. `create`: the
    binding host makes the folder when it is missing; the others only check it."""
    path = os.path.join(data_dir, SOCKET_NAME)
    if len(os.fsencode(path)) <= MAX_SOCKET_PATH or _through_descriptors():
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


def _through_descriptors() -> bool:
    """Whether a long socket path can be used as `/proc/self/fd/<its folder>/<name>`."""
    return sys.platform.startswith("linux") and os.path.isdir("/proc/self/fd")


def _bind_or_connect(sock: Socket, path: str, bind: bool) -> None:
    """`sock.bind(path)` or `sock.connect(path)`, a path too long for an address (H1) taken
    through a descriptor of its folder, which also pins the folder while it is used."""
    if len(os.fsencode(path)) <= MAX_SOCKET_PATH:
        address = path
        folder = None
    else:
        folder = os.open(os.path.dirname(path), os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        address = f"/proc/self/fd/{folder}/{os.path.basename(path)}"
    try:
        if bind:
            sock.bind(address)
        else:
            sock.connect(address)
    finally:
        if folder is not None:
            os.close(folder)


def bind_host_socket(data_dir: str | os.PathLike[str]) -> socket.socket:
    """The host socket, bound 0600 and listening (H1). Call it holding the lock: a socket
    file found there is a dead host's (H2). AttachError when its folder is refused."""
    return listening_socket(bind_raw_host_socket(data_dir))


def listening_socket(raw: Socket) -> socket.socket:
    """The `socket.socket` (non-blocking) of a socket `bind_raw_host_socket` bound."""
    import socket

    sock = socket.socket(fileno=raw.detach())
    sock.setblocking(False)  # a socket made from a descriptor starts in blocking mode
    return sock


def bind_raw_host_socket(data_dir: str | os.PathLike[str]) -> Socket:
    """`bind_host_socket` on `_socket` alone, as an inline front door binds it before it
    answers its client's first `initialize` (`socket` brings `enum` and `selectors`, ~5 ms
    of CPU); `listening_socket` makes it the listener's after that answer."""
    path = socket_path(os.fspath(data_dir), create=True)
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    sock = unix_socket()
    old = os.umask(0o177)
    try:
        _bind_or_connect(sock, path, bind=True)
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    sock.listen(64)
    sock.setblocking(False)
    # Not imported for this line (~7 ms of CPU before the early answer): where nothing
    # imported logging yet (cli/entry.py's inline host sets it up after that answer), no
    # handler or level below WARNING exists, and this INFO line would be dropped anyway.
    logging = sys.modules.get("logging")
    if logging is not None:
        logging.getLogger("askbridge.daemon").info("listening on %s", path)
    return sock


def connect(data_dir: str, timeout: float | None = None) -> Socket | None:
    """A connection to the running host of `data_dir`, or None when none listens.
    `timeout`: for each later send and receive too (a `TimeoutError`, an OSError).
    AttachError, the connection closed before a byte was sent, when the listener runs
    as another uid (S13: it would get our environment and our stdio)."""
    path = socket_path(data_dir)
    sock = unix_socket()
    try:
        if timeout is not None:
            sock.settimeout(timeout)
        _bind_or_connect(sock, path, bind=False)
        pid, uid, _gid = peer_credentials(sock)
    except (FileNotFoundError, ConnectionRefusedError):
        sock.close()
        return None
    except BaseException:
        sock.close()
        raise
    if uid != os.geteuid():
        sock.close()
        raise AttachError(
            f"refusing the host socket {path}: its listener runs as uid {uid} (pid {pid}), "
            f"not as this user (uid {os.geteuid()})"
        )
    return sock


def request(
    data_dir: str, message: dict[str, Any], timeout: float | None = None
) -> dict[str, Any] | None:
    """Send `message` to the host of `data_dir` and return its one-line answer (`status`,
    `stop`); None when no host listens, or it closes without answering. OSError and
    ValueError (not JSON) are the caller's."""
    sock = connect(data_dir, timeout)
    if sock is None:
        return None
    try:
        send_line(sock, message)
        return Lines(sock).next()
    finally:
        sock.close()


def process_alive(pid: int) -> bool:
    """True while `pid` runs (a zombie counts as gone): `askbridge host --stop` and the test
    harness wait on it for a host to be gone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie (our own child, not yet reaped) is gone for our purposes
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return True


# -- JSON, on the C module (the module docstring says why) ----------------------------------


def _unencodable(value: object) -> object:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


_encode_ascii = _json.make_encoder(
    None, _unencodable, _json.encode_basestring_ascii, None, ":", ",", False, False, True
)
_encode_text = _json.make_encoder(
    None, _unencodable, _json.encode_basestring, None, ":", ",", False, False, False
)


class _ScanContext:  # what `_json.make_scanner` reads off a `json.JSONDecoder`: the defaults
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = float  # NaN, Infinity, -Infinity, as json's own table gives them
    memo: dict[str, str] = {}


_scan = _json.make_scanner(_ScanContext())  # type: ignore[arg-type]  # typeshed wants a scanner
_JSON_SPACE = " \t\n\r"


def dumps(message: dict[str, Any]) -> str:
    """`json.dumps(message, separators=(",", ":"))`: ASCII, so any str (an environment's
    undecodable bytes too) survives the trip."""
    return "".join(_encode_ascii(message, 0))


def dumps_text(value: Any) -> str:
    """`json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)`, as the
    LSP framer writes; UnicodeEncodeError comes only from encoding the result."""
    return "".join(_encode_text(value, 0))


def loads(data: bytes | str) -> Any:
    """`json.loads` of one JSON document (bytes as strict UTF-8); ValueError when it is not
    one, RecursionError when it is nested too deep to decode."""
    text = data.decode() if isinstance(data, bytes) else data
    start = len(text) - len(text.lstrip(_JSON_SPACE))
    try:
        value, end = _scan(text, start)
    except StopIteration as exc:
        raise ValueError(f"not JSON: {text[:80]!r}") from exc
    if text[end:].lstrip(_JSON_SPACE):
        raise ValueError(f"not one JSON document: {text[:80]!r}")
    return value


def send_line(sock: Socket, message: dict[str, Any], fds: list[int] | None = None) -> None:
    """One message as a JSON line, with `fds` as SCM_RIGHTS on its first bytes (H4)."""
    data = (dumps(message) + "\n").encode()
    if fds:
        rights = [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, pack(f"{len(fds)}i", *fds))]
        sent = sock.sendmsg([data], rights)
        data = data[sent:]
    if data:
        sock.sendall(data)


class Lines:
    """The messages a connection receives, one JSON line at a time."""

    def __init__(self, sock: Socket) -> None:
        self._sock = sock
        self._buf = b""

    def next(self) -> dict[str, Any] | None:
        """The next message (`{}` for a line that is not an object); None at end of input."""
        while b"\n" not in self._buf:
            chunk = self._sock.recv(65536)
            if not chunk:
                return None
            self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        value = loads(line)
        return value if isinstance(value, dict) else {}
