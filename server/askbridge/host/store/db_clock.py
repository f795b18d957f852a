"""The database's clock seen from a host's monotonic clock (G7).

Every absolute time of the team (a lease's end, a claim's, a deadline, answered-at) is
the database's `clock_timestamp()`, so hosts whose own clocks disagree by 30 s still
agree on them. A host acts on such a time with its own timers, which run on its
monotonic clock (core/clock.py), so it needs the offset between the two: each lease
renewal reads `clock_timestamp()` and notes the host's monotonic time just before the
statement went and just after its reply came (`observe`). The database read its
clock somewhere in between, so the midpoint is the estimate and half the round trip
its error bound; of the last few samples the one with the shortest round trip is
kept (the least delayed by scheduling and the network), as NTP filters its samples.

Pure: no I/O, no driver; the clock is injected (tests shift it by any offset, and a
ManualClock makes a sample exact).
"""

from __future__ import annotations

from collections import deque
from datetime import datetime, timedelta
from typing import NamedTuple

from askbridge.core.clock import Clock

_EPOCH = datetime.fromisoformat("1970-01-01T00:00:00+00:00")
_KEEP = 8  # samples: at one per renewal (2.5 s) the last 20 s


class Sample(NamedTuple):
    offset_ms: float  # database time minus local monotonic time, in ms
    round_trip_ms: float


def database_ms(when: datetime) -> float:
    """A database time (timezone-aware) in ms since the Unix epoch."""
    return (when - _EPOCH) / timedelta(milliseconds=1)


class DatabaseClock:
    def __init__(self, clock: Clock, keep: int = _KEEP) -> None:
        self.clock = clock
        self._samples: deque[Sample] = deque(maxlen=keep)
        self._best: Sample | None = None

    def observe(self, sent_ms: float, received_ms: float, database_time: datetime) -> None:
        """A reading of the database's clock taken by a statement sent at `sent_ms` and
        answered at `received_ms` (both on `clock`)."""
        round_trip = max(0.0, received_ms - sent_ms)
        midpoint = sent_ms + round_trip / 2
        self._samples.append(Sample(database_ms(database_time) - midpoint, round_trip))
        self._best = min(self._samples, key=lambda sample: sample.round_trip_ms)

    @property
    def measured(self) -> bool:
        return self._best is not None

    @property
    def offset_ms(self) -> float:
        """Database time minus local time (ms); ValueError before the first sample."""
        return self._sample().offset_ms

    @property
    def error_ms(self) -> float:
        """How far off a mapped time may be: half the kept sample's round trip."""
        return self._sample().round_trip_ms / 2

    def local_ms(self, database_time: datetime) -> float:
        """When `database_time` comes, on the host's monotonic clock."""
        return database_ms(database_time) - self._sample().offset_ms

    def database_time(self, local_ms: float) -> datetime:
        """The database's time at the host's monotonic `local_ms`."""
        return _EPOCH + timedelta(milliseconds=local_ms + self._sample().offset_ms)

    def remaining_ms(self, database_time: datetime) -> float:
        """Milliseconds from now (the host's clock) until `database_time`; negative once
        it has passed."""
        return self.local_ms(database_time) - self.clock.now()

    def _sample(self) -> Sample:
        if self._best is None:
            raise ValueError("the database's clock has not been read yet")
        return self._best
