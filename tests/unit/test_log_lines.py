"""S12's lines as every command makes them (askbridge/log_lines.py): the same line as the
standard formatter's, records without the fields our format does not read."""

from __future__ import annotations

import logging
import sys

from askbridge.log_lines import LOG_FORMAT, LineFormatter


def _record(created: float, exc: bool = False) -> logging.LogRecord:
    info = None
    if exc:
        try:
            raise ValueError("broken")
        except ValueError:
            info = sys.exc_info()
    record = logging.LogRecord(
        "askbridge.host", logging.INFO, "(unknown file)", 0, "question %s asked", ("c1",), info
    )
    record.created, record.msecs = created, (created - int(created)) * 1000
    return record


def test_S12_a_line_is_the_standard_formatters_line() -> None:
    ours, standard = LineFormatter(), logging.Formatter(LOG_FORMAT)
    # Several lines in one second, then the next second: the cached date changes with it.
    for created in (1_764_647_796.0, 1_764_647_796.123, 1_764_647_796.999, 1_764_647_797.5):
        record = _record(created)
        assert ours.format(record) == standard.format(_record(created))
    assert ours.format(_record(1_764_647_797.5)).endswith(
        ",500 INFO askbridge.host: question c1 asked"
    )


def test_S12_a_traceback_is_kept() -> None:
    line = LineFormatter().format(_record(1_764_647_796.0, exc=True))
    assert "Traceback" in line and "ValueError: broken" in line
