"""How every command's log lines are made: one format, records kept lean.

S12 has the host tell every question's life in host.log: two INFO lines per
question (asked, and how it ended). At the host's question rate the standard
machinery was a tenth of an attached host's CPU profile, and what made attached
slower than inline (which logs at WARNING): each `LogRecord` looks up its
caller's frame, file, thread and process, and each line formats its time with
`localtime` + `strftime`. Our one format reads none of those fields, so:

- `lean_records()` turns off the caller lookup and the thread/process fields;
- `LineFormatter` formats the same `asctime` (`2026-12-02 03:56:36,123`) with
  the date and time of a second formatted once for all its lines.

A line is still written and flushed when it is logged (the handler is the
standard one): the log holds it before anything the process does next.
Standard library only.
"""

from __future__ import annotations

import logging
import time

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# logging.Formatter's default_time_format and default_msec_format: the same asctime.
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"
MSEC_FORMAT = "%s,%03d"


def lean_records() -> None:
    """LogRecords without the caller lookup and the thread/process fields, which
    `LOG_FORMAT` does not read (tracebacks, `exc_info`, are kept)."""
    logging._srcfile = None
    logging.logThreads = False
    logging.logProcesses = False
    logging.logMultiprocessing = False


class LineFormatter(logging.Formatter):
    """`LOG_FORMAT`, its time's date and seconds formatted once per second."""

    def __init__(self) -> None:
        super().__init__(LOG_FORMAT)
        self._second = -1
        self._stamp = ""

    def format(self, record: logging.LogRecord) -> str:
        """`logging.Formatter.format` of `LOG_FORMAT`, spelled out for the common record
        (no traceback, no stack): the standard path asks the format string whether it
        uses the time, and %-formats the record's whole `__dict__`, on every line."""
        if record.exc_info or record.exc_text or record.stack_info:
            return super().format(record)
        record.message = message = record.getMessage()
        record.asctime = stamp = self.formatTime(record)
        return f"{stamp} {record.levelname} {record.name}: {message}"

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        if datefmt is not None:
            return super().formatTime(record, datefmt)
        second = int(record.created)
        if second != self._second:
            self._stamp = time.strftime(TIME_FORMAT, self.converter(record.created))
            self._second = second
        return MSEC_FORMAT % (self._stamp, record.msecs)
