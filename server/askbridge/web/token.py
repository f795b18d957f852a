"""The web door's token (B2): 32 random bytes, hex, in `<data-dir>/web.token` (0600).

Stable across restarts so a bookmarked URL keeps working; `--new-token` replaces it,
which also invalidates every browser's cookie (the cookie carries the token).
"""

from __future__ import annotations

import hmac
import os
import secrets
from pathlib import Path

TOKEN_FILE = "web.token"
TOKEN_BYTES = 32


def load_token(data_dir: Path, *, new: bool = False) -> str:
    """The door's token, created (or with `new`, replaced) first when needed."""
    path = data_dir / TOKEN_FILE
    if not new:
        try:
            text = path.read_text(encoding="ascii").strip()
        except (FileNotFoundError, UnicodeDecodeError):
            text = ""
        if len(text) == TOKEN_BYTES * 2 and all(c in "0123456789abcdef" for c in text):
            os.chmod(path, 0o600)  # S5: every file in the data dir is private
            return text
    token = secrets.token_hex(TOKEN_BYTES)
    tmp = path.with_name(TOKEN_FILE + ".new")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(token + "\n")
    os.replace(tmp, path)  # atomic: a crash never leaves half a token
    return token


def same_token(given: str | None, token: str) -> bool:
    """Constant-time comparison: the token must not leak through response timing."""
    return given is not None and hmac.compare_digest(given.encode(), token.encode())
