"""A policy's durations (R3 escalation, R5 deny after): `90s`, `10m`, `1h30m`, `2d`.

A duration is written with its units, never as a bare number: "after 10" could be
seconds or minutes, and a policy that denies is no place to guess. Units are `ms`,
`s`, `m`, `h` and `d`, each at most once and largest first. The longest is
2147483647 ms (about 24.8 days), the bound a timed wait's timeout has (TW1).
"""

from __future__ import annotations

import re

MAX_MS = 2_147_483_647
_UNITS = {"d": 86_400_000, "h": 3_600_000, "m": 60_000, "s": 1_000, "ms": 1}
_N = "([0-9]{1,10})"
_DURATION = re.compile(f"(?:{_N}d)?(?:{_N}h)?(?:{_N}m(?!s))?(?:{_N}s)?(?:{_N}ms)?")


def parse_duration(text: str) -> int:
    """Milliseconds; ValueError says what a duration looks like."""
    found = _DURATION.fullmatch(text)
    if not text or found is None:
        raise ValueError('is not a duration like "90s", "10m" or "1h30m" (units d, h, m, s, ms)')
    counts = zip(found.groups(), _UNITS.values(), strict=True)
    ms = sum(int(n) * unit for n, unit in counts if n is not None)
    if ms == 0:
        raise ValueError("must be longer than 0")
    if ms > MAX_MS:
        raise ValueError(f"is longer than {MAX_MS} ms (about 24.8 days)")
    return ms


def format_duration(ms: float) -> str:
    """`ms` as a policy writes it: 5400000 -> "1h30m"."""
    rest, parts = int(ms), []
    for unit, size in _UNITS.items():
        if rest >= size:
            parts.append(f"{rest // size}{unit}")
            rest %= size
    return "".join(parts) or "0ms"
