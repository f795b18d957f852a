"""The web door's token (B2, S14): 32 random bytes, hex, in `<data-dir>/web.token` (0600).

The file holds the token on its first line and `created <unix seconds>` on the
second; the token expires `--token-ttl` after that (a file without the line, as
older doors wrote it, counts from its modification time). Stable across restarts
so a bookmarked URL keeps working until then; `--new-token` replaces it.

A running door re-reads the file when it changes (one `stat` per check), so
`askbridge web --new-token` beside a running door ends that door's sessions at
once: each session is tied to the token it was opened with (session.py).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

TOKEN_FILE = "web.token"
TOKEN_BYTES = 32
DEFAULT_TTL = "30d"
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_HEX = re.compile(f"[0-9a-f]{{{TOKEN_BYTES * 2}}}")


def parse_ttl(text: str) -> float:
    """`--token-ttl`: seconds (`3600`), or a number with a unit: `90m`, `12h`, `30d`, `2w`."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*", text)
    seconds = float(m[1]) * _UNITS[m[2] or "s"] if m else 0.0
    if seconds <= 0:
        raise ValueError(f"--token-ttl {text!r} is not a duration such as 3600, 90m, 12h or 30d")
    return seconds


@dataclass(frozen=True)
class Token:
    value: str
    created: float  # unix seconds
    expires: float  # unix seconds

    @property
    def digest(self) -> bytes:
        """What a session keeps of its token: enough to tell it is still the one."""
        return hashlib.sha256(self.value.encode()).digest()

    def matches(self, given: object) -> bool:
        """Constant-time comparison: the token must not leak through response timing."""
        return isinstance(given, str) and hmac.compare_digest(
            given.encode("utf-8", "replace"), self.value.encode()
        )


class TokenFile:
    def __init__(self, data_dir: Path, ttl_s: float, wall: Callable[[], float] = time.time) -> None:
        self.path = data_dir / TOKEN_FILE
        self.ttl_s = ttl_s
        self.wall = wall
        self._seen: tuple[int, int, int] | None = None
        self._token: Token | None = None

    def load(self, *, new: bool = False) -> Token:
        """The door's token, created (or with `new`, replaced) first when needed."""
        token = None if new else self.current()
        if token is not None:
            os.chmod(self.path, 0o600)  # S5: every file in the data dir is private
            return token
        value, created = secrets.token_hex(TOKEN_BYTES), int(self.wall())
        tmp = self.path.with_name(TOKEN_FILE + ".new")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(f"{value}\ncreated {created}\n")
        os.replace(tmp, self.path)  # atomic: a crash never leaves half a token
        fresh = self.current()
        assert fresh is not None
        return fresh

    def current(self) -> Token | None:
        """The token the file holds now (None when it is missing or not a token)."""
        try:
            st = os.stat(self.path)
        except OSError:
            self._seen = self._token = None
            return None
        seen = (st.st_ino, st.st_mtime_ns, st.st_size)
        if seen != self._seen:
            self._seen, self._token = seen, self._read(st.st_mtime)
        return self._token

    def expired(self, token: Token) -> bool:
        return self.wall() >= token.expires

    def _read(self, mtime: float) -> Token | None:
        try:
            lines = self.path.read_text(encoding="ascii").split("\n")
        except (OSError, UnicodeDecodeError):
            return None
        if not _HEX.fullmatch(lines[0].strip()):
            return None
        created = mtime
        for line in lines[1:]:
            key, _, value = line.partition(" ")
            if key == "created" and value.strip().isdigit():
                created = float(value)
        return Token(lines[0].strip(), created, created + self.ttl_s)
