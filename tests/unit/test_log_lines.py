"""S12's lines as every command makes them (askbridge/log_lines.py): the same line as the
standard formatter's, records without the fields our format does not read."""

from __future__ import annotations

import asyncio
import io
import logging
import os
import subprocess
import sys
from pathlib import Path

from askbridge.log_lines import LOG_FORMAT, MAX_TURNS, LeanLogger, LineFormatter, LineHandler


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


class _Writes(io.StringIO):
    """A stream that records each write."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[str] = []

    def write(self, text: str) -> int:
        self.writes.append(text)
        return super().write(text)


def _handler() -> tuple[LineHandler, LeanLogger, logging.Logger, _Writes]:
    stream = _Writes()
    handler = LineHandler(stream)
    logger = logging.getLogger("askbridge.test_log_lines")
    logger.handlers[:] = [handler]
    logger.propagate = False
    logger.setLevel(logging.INFO)
    return handler, LeanLogger(logger.name), logger, stream


def test_S12_a_turns_lines_arrive_in_one_write_once_the_loop_may_wait() -> None:
    _, lean, logger, stream = _handler()

    async def main() -> list[str]:
        lean.info("question %s asked in session %s", "c1", "s1")
        logger.info("client %d attached", 1)
        lean.info("question %s answered by %s", "c1", "client 1")
        assert stream.writes == []  # kept for the end of the turn
        await asyncio.sleep(0.01)  # the loop waits: the turn's lines are written first
        return list(stream.writes)

    writes = asyncio.run(main())
    assert len(writes) == 1
    lines = writes[0].splitlines()
    assert [line.split(" ", 3)[3] for line in lines] == [
        "askbridge.test_log_lines: question c1 asked in session s1",
        "askbridge.test_log_lines: client 1 attached",
        "askbridge.test_log_lines: question c1 answered by client 1",
    ]
    assert all(line.split(" ")[2] == "INFO" for line in lines)


def test_S12_a_busy_loop_writes_after_MAX_TURNS_and_a_warning_at_once() -> None:
    _, lean, logger, stream = _handler()

    async def main() -> None:
        lean.info("kept")
        for _ in range(MAX_TURNS + 1):  # turns that never wait (sleep(0): ready at once)
            await asyncio.sleep(0)
        assert len(stream.writes) == 1
        lean.info("kept again")
        logger.warning("at once")  # above INFO: written now, after the kept line
        assert len(stream.writes) == 2 and stream.writes[1].count("\n") == 2

    asyncio.run(main())


def test_S12_without_a_loop_and_at_shutdown_lines_are_written() -> None:
    handler, lean, _, stream = _handler()
    lean.info("no loop")  # written when logged
    assert len(stream.writes) == 1

    async def main() -> None:
        lean.info("last line of the loop")  # the loop ends without waiting again

    loop = asyncio.new_event_loop()
    loop.run_until_complete(main())
    loop.close()
    handler.flush()  # logging.shutdown() at exit flushes every handler
    assert stream.getvalue().endswith("last line of the loop\n")


def test_S12_the_lean_line_is_the_records_line() -> None:
    _, lean, logger, stream = _handler()
    standard = logging.StreamHandler(io.StringIO())
    standard.setFormatter(logging.Formatter(LOG_FORMAT))
    lean.info("question %s asked (%d item%s)", "c1", 1, "")
    logger.addHandler(standard)  # two handlers: the standard path, a record
    lean.info("question %s asked (%d item%s)", "c1", 1, "")
    ours = stream.getvalue().splitlines()
    theirs = standard.stream.getvalue().splitlines()  # type: ignore[attr-defined]
    assert [line[24:] for line in ours] == [theirs[0][24:]] * 2
    assert ours[0][24:] == "INFO askbridge.test_log_lines: question c1 asked (1 item)"


def test_S12_lines_kept_by_a_loop_are_written_at_exit_and_before_a_traceback(
    tmp_path: Path,
) -> None:
    log = tmp_path / "host.log"
    code = (
        "import asyncio, logging\n"
        "from askbridge.logsetup import setup_logging\n"
        "from askbridge.log_lines import LeanLogger\n"
        f"setup_logging({str(log)!r}, 'INFO')\n"
        "async def main():\n"
        "    LeanLogger('askbridge.host').info('question %s asked', 'c1')\n"
        "    logging.getLogger('askbridge.host').info('question %s answered', 'c1')\n"
        "    raise SystemExit(0) if EXIT else KeyError('crash')\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", "EXIT = True\n" + code + "asyncio.run(main())"], env=env
    )
    assert done.returncode == 0
    assert log.read_text().count("question c1") == 2
    log.unlink()
    script = (
        "EXIT = False\n"
        + code
        + (
            "import sys\n"
            "try:\n    asyncio.run(main())\n"
            "finally:\n    sys.stderr = open(" + repr(str(log)) + ", 'a')\n"
        )
    )
    crash = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True)
    assert crash.returncode == 1
    text = log.read_text()
    assert text.index("question c1 answered") < text.index("KeyError: 'crash'")


def test_S17_a_message_cannot_end_its_line_or_drive_a_terminal() -> None:
    """The formatter shows every control character of a message as an escape, on the record
    path and the lean one alike; a value from outside is quoted unless one plain token."""
    from askbridge.log_lines import escaped, field

    record = _record(1_764_647_796.0)
    record.args = ("c1\n2026-12-02 03:56:36,123 INFO askbridge.host: forged\x1b[2J",)
    line = LineFormatter().format(record)
    assert line.endswith(
        "question c1\\n2026-12-02 03:56:36,123 INFO askbridge.host: forged\\x1b[2J asked"
    )
    assert "\n" not in line and "\x1b" not in line
    lean = LineFormatter().line("INFO", "askbridge.host", "a\rb\x9bc\u2028d\te")
    assert lean.endswith("askbridge.host: a\\rb\\x9bc\\u2028d\te")
    assert escaped("one\ntwo\x07", newlines=True) == "one\ntwo\\x07"
    assert escaped("rm -rf ~ \u202e,x") == "rm -rf ~ \\u202e,x"  # nothing reads reversed
    assert field("call-1") == "call-1" and field("Claude Code") == '"Claude Code"'
    assert field("x\ny") == '"x\\ny"'
