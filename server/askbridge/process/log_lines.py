"""How every command's log lines are made and written: one format, few writes.

S12 has the host tell every question's life in host.log: two INFO lines per
question (asked, and how it ended). At the host's question rate the standard
machinery was what made an attached host slower than inline (which logs at
WARNING): each `LogRecord` looks up its thread and process, each line formats
its time with `localtime` + `strftime`, and each line is its own `write`. Our
one format reads none of those fields, so, through logging's public switches
and subclasses only:

- `lean_records()` turns off the thread and process fields (`logging.logThreads`,
  `logProcesses`, `logMultiprocessing`);
- `LineFormatter` formats the same `asctime` (`2026-12-02 03:56:36,123`) with
  the date and time of a second formatted once for all its lines;
- `LineHandler` writes the lines a loop logs in a turn at once (below).

One exception to "the standard machinery": `LeanLogger.info` (S12's lines) makes
the line without a `LogRecord` when the one handler it would reach is a
`LineHandler` with a `LineFormatter` — the same line, byte for byte, as the
record would have made; with any other handler, a filter or a `%(name)s` mapping
argument it is `Logger.info`. The record path (the caller lookup, the record,
the handler chain) costs ~41k instructions per line: an attached host's question
took 952,696 instructions with it and 869,710 without (callgrind,
benchmarks/profile_host.py --sequential --host attached), 9.5%.

When a line is written (`LineHandler`): a DEBUG or INFO line logged while an
asyncio loop runs in the logging thread is kept, and the loop's next turn writes
the kept lines, in the order they were logged and in one `write` (one
`call_soon` per turn that logs). Everything else is written at once, after the
kept lines: a line above INFO (a warning, an error, a crash report with its
traceback), and any line logged with no loop running in its thread (start-up,
the daemon's cleanup after its loop, a worker thread). Kept lines are also
written by `flush()`: at `logging.shutdown()` (atexit: every normal exit, the
daemon's too), and before an uncaught exception's traceback
(`flush_before_crash_reports`, from `logsetup`).

The cost of that rule: a process killed outright (SIGKILL, `os._exit`) loses the
DEBUG/INFO lines logged in its last turn. Never an acknowledged answer: that is
in the store before a client hears of it (D1); only its log line.

Text from outside (a model, a client, a peer's error) never drives a terminal or
forges a line (S17): `escaped` shows its control characters as visible escapes,
and every line the formatter makes goes through it, so a newline in any field is
`\n` on the same line. `field` quotes such a value where a line names it. Both
live here, a module every layer may import, so that the CLI, the demo and the
host's logging share them.
Standard library only.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import threading
import time
from collections.abc import Mapping
from typing import Any, TextIO

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# logging.Formatter's default_time_format and default_msec_format: the same asctime.
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"
MSEC_FORMAT = "%s,%03d"
INFO = logging.INFO


# The ASCII controls but tab, DEL, the 0x80-0x9f controls, the two Unicode line breaks
# (`str.splitlines` splits on them) and the bidi controls (a bidi-aware terminal, VTE's,
# would reorder the text around them).
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_CONTROLS = re.compile(f"[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029{_BIDI}]")
_CONTROLS_BUT_NEWLINE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029{_BIDI}]")
_NAMED = {"\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escaped(text: str, *, newlines: bool = False) -> str:
    """`text` safe to write to a terminal or a log: every ASCII control but tab (and
    newline when `newlines`, for text meant to span lines), DEL, the 0x80-0x9f controls
    and the bidi controls shown as a visible escape (`\x1b`, `\r`, `\n`, `\u202e`), so
    no escape sequence reaches the terminal, nothing reads reversed, and no line ends
    where the text did not say so. The same string when there is nothing to show."""
    if text.isprintable():  # no control at all (the common line): no regex
        return text
    return (_CONTROLS_BUT_NEWLINE if newlines else _CONTROLS).sub(_escape, text)


_PLAIN = re.compile(r"[\w.:/@+=-]+")


def field(value: object) -> str:
    """A value from outside (a call id, a client's name, a title, a peer's error) as a
    log line names it: as is when it is one plain token, else JSON-quoted, so it can
    neither end the line nor pass for more of the line's words."""
    text = value if isinstance(value, str) else str(value)
    if _PLAIN.fullmatch(text) and text.isascii():
        return text
    return json.dumps(text, ensure_ascii=False)


def lean_records() -> None:
    """LogRecords without the thread and process fields, which `LOG_FORMAT` does not
    read."""
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
        record.message = message = escaped(record.getMessage())
        record.asctime = stamp = self.formatTime(record)
        return f"{stamp} {record.levelname} {record.name}: {message}"

    def formatMessage(self, record: logging.LogRecord) -> str:
        record.message = escaped(record.message)
        return super().formatMessage(record)

    def formatException(self, ei: Any) -> str:
        return escaped(super().formatException(ei), newlines=True)

    def formatStack(self, stack_info: str) -> str:
        return escaped(super().formatStack(stack_info), newlines=True)

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        if datefmt is not None:
            return super().formatTime(record, datefmt)
        return self.stamp(record.created, record.msecs)

    def stamp(self, created: float, msecs: float) -> str:
        """The asctime of a time: `created` as `LogRecord` takes it (`time.time()`), `msecs`
        its milliseconds as `LogRecord` computes them."""
        second = int(created)
        if second != self._second:
            self._stamp = time.strftime(TIME_FORMAT, self.converter(created))
            self._second = second
        return MSEC_FORMAT % (self._stamp, msecs)

    def line(self, levelname: str, name: str, message: str) -> str:
        """The line `format` makes of a record logged now, without the record."""
        created = time.time()  # and its milliseconds, as LogRecord takes them
        stamp = self.stamp(created, int((created - int(created)) * 1000))
        return f"{stamp} {levelname} {name}: {escaped(message)}"


def running_loop() -> Any:
    """The asyncio loop running in this thread, or None; asyncio is not imported for it
    (a command that never runs a loop, `askbridge host --status`, does without it)."""
    asyncio = sys.modules.get("asyncio")
    if asyncio is None:
        return None
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class LineHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Every command's log handler: `LineFormatter` lines on `stream`, a loop's written
    in its next turn (the module's docstring); an `owned` stream (a --log-file)
    closes with it."""

    def __init__(self, stream: TextIO, owned: bool = False) -> None:
        super().__init__(stream)
        self.setFormatter(LineFormatter())
        self._owned = owned
        self._kept: list[str] = []
        self._writing_loop: Any = None  # the loop whose next turn writes the kept lines

    def emit(self, record: logging.LogRecord) -> None:
        """Called with the handler's lock held (`Handler.handle`)."""
        try:
            line = self.format(record)
        except Exception:
            self.handleError(record)
            return
        self.keep(line, record.levelno)

    def lean(self, levelname: str, name: str, message: str) -> None:
        """`emit` of an INFO record that was not made (`LeanLogger`): the same line."""
        line = self.formatter.line(levelname, name, message)  # type: ignore[union-attr]
        with self.lock:  # type: ignore[union-attr]
            self.keep(line, INFO)

    def keep(self, line: str, levelno: int) -> None:
        """Write `line` after the kept ones: now, or in the loop's next turn (hold the
        lock)."""
        self._kept.append(line)
        if levelno > INFO:
            self._write()
            return
        loop = running_loop()
        if loop is None:
            self._write()
        elif loop is not self._writing_loop:
            self._writing_loop = loop
            loop.call_soon(self._write_kept)

    def _write_kept(self) -> None:
        with self.lock:  # type: ignore[union-attr]
            self._writing_loop = None
            self._write()

    def _write(self) -> None:
        if not self._kept:
            return
        text = self.terminator.join(self._kept) + self.terminator
        self._kept = []
        try:
            self.stream.write(text)
            self.stream.flush()
        except Exception:
            self.handleError(logging.makeLogRecord({"msg": text}))

    def flush(self) -> None:
        """Write the kept lines (at shutdown, before a traceback, `setStream`)."""
        with self.lock:  # type: ignore[union-attr]
            self._write()
        super().flush()

    def close(self) -> None:
        self.flush()
        if self._owned:
            with self.lock:  # type: ignore[union-attr]
                self.stream.close()
        super().close()


def flush_before_crash_reports() -> None:
    """An uncaught exception's traceback (main thread or another) comes after the lines
    logged before it: the kept lines are written first."""

    def flush_all() -> None:
        for handler in logging.getLogger().handlers:
            handler.flush()

    excepthook, thread_excepthook = sys.excepthook, threading.excepthook

    def flushed(*exc_info: Any) -> None:
        flush_all()
        excepthook(*exc_info)

    def thread_flushed(args: Any) -> None:
        flush_all()
        thread_excepthook(args)

    sys.excepthook, threading.excepthook = flushed, thread_flushed


class LeanLogger:
    """`logging.getLogger(name)` for lines logged on every question (S12): `info` makes its
    line without a `LogRecord` when a `LineHandler` alone would write it (the module's
    docstring); everything else is the logger's."""

    __slots__ = ("logger", "name")

    def __init__(self, name: str) -> None:
        self.logger = logging.getLogger(name)
        self.name = name

    def info(self, msg: str, *args: object) -> None:
        logger = self.logger
        if not logger.isEnabledFor(INFO):
            return
        handler = sole_line_handler(logger)
        if handler is not None and not (len(args) == 1 and isinstance(args[0], Mapping)):
            try:
                message = msg % args if args else msg
            except Exception:  # the record's way: logged as a logging error
                pass
            else:
                handler.lean("INFO", self.name, message)
                return
        logger.info(msg, *args)

    def debug(self, msg: str, *args: object) -> None:
        self.logger.debug(msg, *args)

    def isEnabledFor(self, level: int) -> bool:
        return self.logger.isEnabledFor(level)


def sole_line_handler(logger: logging.Logger) -> LineHandler | None:
    """The `LineHandler` that is the only handler `logger`'s INFO record would reach
    (`Logger.callHandlers`), with our format and no filter; None otherwise (pytest's
    caplog, a filter, a second handler, none: the standard path)."""
    if logger.filters:
        return None
    node: Any = logger
    while not node.handlers:
        if not node.propagate or node.parent is None:
            return None
        node = node.parent
    handlers = node.handlers
    if len(handlers) != 1 or (node.propagate and node.parent is not None):
        return None
    handler = handlers[0]
    if (
        type(handler) is not LineHandler
        or handler.filters
        or handler.level > INFO
        or type(handler.formatter) is not LineFormatter
    ):
        return None
    return handler
