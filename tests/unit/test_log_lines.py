"""S12's lines as every command makes them (askbridge/process/log_lines.py): the same line as the
standard formatter's, records without the fields our format does not read."""

from __future__ import annotations

import asyncio
import io
import logging
import os
import subprocess
import sys
from pathlib import Path

from askbridge.process.log_lines import LOG_FORMAT, LeanLogger, LineFormatter, LineHandler


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


def _handler() -> tuple[LineHandler, logging.Logger, _Writes]:
    stream = _Writes()
    handler = LineHandler(stream)
    logger = logging.getLogger("askbridge.test_log_lines")
    logger.handlers[:] = [handler]
    logger.propagate = False
    logger.setLevel(logging.INFO)
    return handler, logger, stream


def test_S12_a_turns_lines_arrive_in_one_write_in_the_loops_next_turn() -> None:
    _, logger, stream = _handler()

    async def main() -> list[str]:
        logger.info("question %s asked in session %s", "c1", "s1")
        logger.info("client %d attached", 1)
        logger.info("question %s answered by %s", "c1", "client 1")
        assert stream.writes == []  # kept for the end of the turn
        await asyncio.sleep(0)  # the next turn: the turn's lines are written first
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


def test_S12_a_busy_loop_writes_each_turn_and_a_warning_at_once() -> None:
    _, logger, stream = _handler()

    async def main() -> None:
        for turn in range(3):  # turns that never wait (sleep(0): ready at once)
            logger.info("kept")
            await asyncio.sleep(0)
            assert len(stream.writes) == turn + 1
        logger.info("kept again")
        logger.warning("at once")  # above INFO: written now, after the kept line
        assert len(stream.writes) == 4 and stream.writes[3].count("\n") == 2
        await asyncio.sleep(0)  # the turn's callback finds nothing left to write
        assert len(stream.writes) == 4

    asyncio.run(main())


def test_S12_without_a_loop_and_at_shutdown_lines_are_written() -> None:
    handler, logger, stream = _handler()
    logger.info("no loop")  # written when logged
    assert len(stream.writes) == 1

    async def main() -> None:
        logger.info("last line of the loop")  # the loop ends without another turn

    loop = asyncio.new_event_loop()
    loop.run_until_complete(main())
    loop.close()
    handler.flush()  # logging.shutdown() at exit flushes every handler
    assert stream.getvalue().endswith("last line of the loop\n")

    async def again() -> None:  # a later loop's lines are written in its next turn
        logger.info("a later loop")
        await asyncio.sleep(0)
        assert stream.getvalue().endswith("a later loop\n")

    asyncio.run(again())


def test_S12_the_lean_line_is_the_records_line() -> None:
    _, logger, stream = _handler()
    lean = LeanLogger(logger.name)
    standard = logging.StreamHandler(io.StringIO())
    standard.setFormatter(logging.Formatter(LOG_FORMAT))
    lean.info("question %s asked (%d item%s)", "c1", 1, "")
    logger.addHandler(standard)  # two handlers: the standard path, a record
    lean.info("question %s asked (%d item%s)", "c1", 1, "")
    ours = stream.getvalue().splitlines()
    theirs = standard.stream.getvalue().splitlines()  # type: ignore[attr-defined]
    assert [line[24:] for line in ours] == [theirs[0][24:]] * 2
    assert ours[0][24:] == "INFO askbridge.test_log_lines: question c1 asked (1 item)"


async def test_S12_lean_lines_and_records_share_the_turns_write() -> None:
    _, logger, stream = _handler()
    LeanLogger(logger.name).info("question %s asked", "c1")
    logger.info("client %d attached", 1)
    assert stream.writes == []
    await asyncio.sleep(0)
    assert len(stream.writes) == 1 and stream.writes[0].count("\n") == 2


def test_S12_lines_kept_by_a_loop_are_written_at_exit_and_before_a_traceback(
    tmp_path: Path,
) -> None:
    log = tmp_path / "host.log"
    code = (
        "import asyncio, logging\n"
        "from askbridge.cli.logsetup import setup_logging\n"
        "from askbridge.process.log_lines import LeanLogger\n"
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
    from askbridge.process.log_lines import escaped, field

    record = _record(1_764_647_796.0)
    record.args = ("c1\n2026-12-02 03:56:36,123 INFO askbridge.host: forged\x1b[2J",)
    line = LineFormatter().format(record)
    assert line.endswith(
        "question c1\\n2026-12-02 03:56:36,123 INFO askbridge.host: forged\\x1b[2J asked"
    )
    assert "\n" not in line and "\x1b" not in line
    record.args = ("a\rb\x9bc\u2028d\te",)
    assert LineFormatter().format(record).endswith("question a\\rb\\x9bc\\u2028d\te asked")
    lean = LineFormatter().line("INFO", "askbridge.host", "a\rb\x9bc\u2028d\te")
    assert lean.endswith("askbridge.host: a\\rb\\x9bc\\u2028d\te")
    assert escaped("one\ntwo\x07", newlines=True) == "one\ntwo\\x07"
    assert escaped("rm -rf ~ \u202e,x") == "rm -rf ~ \\u202e,x"  # nothing reads reversed
    assert field("call-1") == "call-1" and field("Claude Code") == '"Claude Code"'
    assert field("x\ny") == '"x\\ny"'
