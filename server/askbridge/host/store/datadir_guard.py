"""A claim on a data directory's path that outlives the directory itself (S5).

The flock of `askbridge.lock` (datadir.py) lives on the lock file. After
`rm -rf <data-dir>` (or `mv` of it) the holder keeps its files open and its
lock held, but nobody can reach them any more: a new `open_store` on the same
path would create a fresh directory and lock a fresh file, and two processes
would each believe the path is theirs until the first one's next commit check
(`DataDirLock.check`) stops it. The guard closes that window: the second
process is refused while the first is alive.

On Linux the guard is a listening unix socket in the abstract namespace named
after the user and the directory's real path. Nothing on disk can remove or
plant it; the kernel frees the name when the holder closes it or dies (also by
`kill -9`), and the descriptor is not inherited by child processes. A second
claimant connects to it and learns the holder's pid from `SO_PEERCRED`, so the
refusal can name it. Connections are never accepted; they wait in the backlog
until the claimant closes them, which it does at once.

The abstract namespace has no permissions, and the name is predictable: any local
user could bind it first. So the guard counts only when its holder has our uid,
as `SO_PEERCRED` tells on connect (S5). A name held by another uid — or by a
holder the kernel will not name (its backlog kept full) — is a squatter: the
start goes on without a guard, the per-commit check standing in as it does where
there is no abstract namespace, and nothing is learnt from or sent to it. So
another user can neither block the host nor pose as its holder.

Elsewhere there is no abstract namespace and `claim` holds nothing: there the
per-commit check is what stops the first process (it stops acknowledging).

The guard is claimed before an inline host answers `initialize`, so its socket is
hostsock.py's, on the C module (that module says what this buys).
"""

from __future__ import annotations

import os
import sys

from askbridge.process.hostsock import peer_credentials, sha256, unix_socket

TYPE_CHECKING = False  # not `typing`'s (private_files.py; mypy knows the name)
if TYPE_CHECKING:
    from askbridge.process.hostsock import Socket

    from .private_files import Where

_ABSTRACT = sys.platform.startswith("linux")
_BACKLOG = 64  # only claimants asking who holds the name ever connect
_MAX_COMMAND_CHARS = 200


class DirectoryTaken(Exception):
    """Another live process holds the guard of this path."""

    def __init__(self, pid: int | None, uid: int | None, command: list[str]) -> None:
        super().__init__(pid)
        self.pid = pid
        self.uid = uid
        self.command = command

    def describe(self, data_dir: Where) -> str:
        """The one line a refused start prints."""
        holder = "another process" if self.pid is None else f"process {self.pid}"
        if self.command:
            holder += f" ({shorten_command(self.command)})"
        if self.uid is not None and self.uid != os.geteuid():
            holder += f" of uid {self.uid}"
        return (
            f"data directory {data_dir} is in use by {holder}, which opened it before it "
            "was deleted or replaced; stop that process first"
        )


class DirectoryGuard:
    def __init__(self, sock: Socket | None) -> None:
        self._sock = sock

    @classmethod
    def claim(cls, data_dir: Where) -> DirectoryGuard:
        """The guard of `data_dir`'s real path; DirectoryTaken when a live process has it."""
        if not _ABSTRACT:
            return cls(None)
        name = guard_name(data_dir)
        sock = unix_socket()
        try:
            sock.bind(name)
            sock.listen(_BACKLOG)
        except OSError:
            sock.close()
            taken = _taken(name)
            if taken.uid != os.geteuid():
                return cls(None)  # a squatter, not one of ours (module docstring)
            raise taken from None
        return cls(sock)

    def release(self) -> None:
        sock, self._sock = self._sock, None
        if sock is not None:
            sock.close()


def guard_name(data_dir: Where) -> bytes:
    """The abstract socket name for `data_dir`: per user, per real path."""
    digest = sha256(os.fsencode(os.path.realpath(data_dir))).hexdigest()[:40]
    return f"\0askbridge-data-dir/{os.geteuid()}/{digest}".encode()


def _taken(name: bytes) -> DirectoryTaken:
    """Who holds `name`, as far as the kernel tells (nothing when the backlog is full)."""
    probe = unix_socket()
    probe.setblocking(False)
    try:
        probe.connect(name)
        pid, uid, _ = peer_credentials(probe)
    except OSError:
        return DirectoryTaken(None, None, [])
    finally:
        probe.close()
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as file:
            raw = file.read()
    except OSError:
        raw = b""
    command = [os.path.basename(word) if i == 0 else word for i, word in enumerate(_split(raw))]
    return DirectoryTaken(pid, uid, command)


def _split(raw: bytes) -> list[str]:
    # Not fsdecode: the words end up in a message a client may be sent, so no surrogates.
    return [word.decode(errors="replace") for word in raw.rstrip(b"\0").split(b"\0") if word]


def shorten_command(words: list[str]) -> str:
    """A command line on one line of at most 200 characters."""
    text = " ".join(words).replace("\n", " ")
    return text if len(text) <= _MAX_COMMAND_CHARS else text[: _MAX_COMMAND_CHARS - 1] + "…"
