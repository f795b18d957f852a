"""The database's clock mapped to a host's monotonic clock (G7, host/store/db_clock.py):
a pure helper, driven here by a ManualClock, with the database's time made up."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from askbridge.core.clock import ManualClock
from askbridge.host.store.db_clock import DatabaseClock, database_ms

DB_START = datetime.fromisoformat("2025-06-01T12:00:00+00:00")


def test_G7_a_sample_maps_database_times_to_the_hosts_clock_and_back() -> None:
    clock = ManualClock(start=5_000.0)
    times = DatabaseClock(clock)
    # Sent at 5000 ms, answered at 5010 ms; the database read 12:00:00.005 meanwhile.
    times.observe(5_000.0, 5_010.0, DB_START + timedelta(milliseconds=5))
    assert times.error_ms == 5.0
    lease_end = DB_START + timedelta(seconds=10, milliseconds=5)
    assert times.local_ms(lease_end) == pytest.approx(15_005.0)
    assert times.database_time(15_005.0) == lease_end
    clock.set(5_010.0)
    assert times.remaining_ms(lease_end) == pytest.approx(9_995.0)
    clock.set(16_000.0)
    assert times.remaining_ms(lease_end) < 0  # lapsed, by the host's reckoning


@given(st.floats(min_value=-1e9, max_value=1e9), st.floats(min_value=0, max_value=500))
def test_G7_hosts_whose_clocks_disagree_see_the_same_time_left(shift_ms: float, rtt: float) -> None:
    """Two hosts, one clock shifted by any amount (30 s, or years), read the same database
    time with the same round trip: each maps a deadline to the same time left."""
    left_ms = []
    for offset in (0.0, shift_ms):
        clock = ManualClock(start=1_000.0 + offset)
        times = DatabaseClock(clock)
        times.observe(clock.now(), clock.now() + rtt, DB_START)
        clock.advance(rtt)
        left_ms.append(times.remaining_ms(DB_START + timedelta(seconds=10)))
    assert left_ms[0] == pytest.approx(left_ms[1], abs=1e-3)
    assert left_ms[0] == pytest.approx(10_000.0 - rtt / 2, abs=1e-3)


def test_G7_the_sample_with_the_shortest_round_trip_is_kept() -> None:
    """A reply delayed by scheduling says little about when the database read its clock;
    of the last samples the least delayed one sets the offset, until it is too old."""
    clock = ManualClock()
    times = DatabaseClock(clock, keep=3)
    exact = DB_START + timedelta(milliseconds=1)
    times.observe(0.0, 2.0, exact)  # offset: db - 1 ms, within ±1 ms
    times.observe(100.0, 400.0, DB_START + timedelta(milliseconds=350))  # a slow one
    assert times.offset_ms == pytest.approx(database_ms(DB_START))
    assert times.error_ms == 1.0
    times.observe(500.0, 800.0, DB_START + timedelta(milliseconds=700))
    times.observe(900.0, 1200.0, DB_START + timedelta(milliseconds=1000))  # the exact one is out
    assert times.error_ms == 150.0


def test_G7_nothing_is_mapped_before_the_first_reading() -> None:
    times = DatabaseClock(ManualClock())
    assert not times.measured
    with pytest.raises(ValueError, match="not been read yet"):
        times.local_ms(DB_START)
