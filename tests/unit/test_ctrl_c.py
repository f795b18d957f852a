"""Ctrl-C ends any command with status 130 and no traceback (cli/commands.py), even when it lands
inside an import that Python reports as another exception (cli/exits.py interrupted) or in the
console script's first import of the command line (cli/entry.py main), and a host holds it
off while its start imports (askbridge/process/ctrl_c.py `CtrlCHeld`, inline and `askbridge host`)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from askbridge.cli import commands, entry
from askbridge.cli.exits import EXIT_INTERRUPTED, interrupted
from askbridge.cli.parser import parse_args
from askbridge.daemon import main as daemon_main
from askbridge.daemon.inline import serve_inline
from askbridge.host.store.datadir import open_checked
from askbridge.process.ctrl_c import CtrlCHeld


class _InterruptedWhileNamed:
    def __set_name__(self, owner: type, name: str) -> None:
        raise KeyboardInterrupt


def _class_body_interrupted() -> BaseException:
    """What Python 3.11 raises when Ctrl-C lands in a class body's `__set_name__`."""
    try:

        class _Settings:  # a dataclass field's __set_name__, as host/options.py's
            field = _InterruptedWhileNamed()

    except BaseException as exc:
        return exc
    raise AssertionError("the class body was not interrupted")


def test_an_interrupt_wrapped_by_set_name_is_still_ctrl_c() -> None:
    exc = _class_body_interrupted()
    assert not isinstance(exc, KeyboardInterrupt)  # the wrapping this guards against
    assert interrupted(exc)
    assert interrupted(KeyboardInterrupt())


def test_other_failures_are_not_ctrl_c() -> None:
    assert not interrupted(RuntimeError("boom"))
    try:
        try:
            raise ValueError("first")
        except ValueError as first:
            raise RuntimeError("second") from first
    except RuntimeError as chained:
        assert not interrupted(chained)


def test_main_returns_130_for_a_wrapped_interrupt_and_raises_anything_else(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def interrupted_run(args: object) -> int:
        raise _class_body_interrupted()

    monkeypatch.setattr(commands, "_run", interrupted_run)
    assert commands.main(["schema", "--out", "unused"]) == EXIT_INTERRUPTED

    def failing_run(args: object) -> int:
        raise RuntimeError("a real failure")

    monkeypatch.setattr(commands, "_run", failing_run)
    with pytest.raises(RuntimeError, match="a real failure"):
        commands.main(["schema", "--out", "unused"])


@pytest.fixture
def sigint_default() -> Iterator[None]:
    """SIGINT as a person's Python has it (an xdist worker may run with it ignored)."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def _signal_lands() -> None:
    """SIGINT to this process, and bytecode run after it (Python runs handlers between)."""
    os.kill(os.getpid(), signal.SIGINT)
    for _ in range(1000):
        pass


def test_ctrl_c_while_the_inline_host_imports_is_held_to_the_end_of_it(
    sigint_default: None,
) -> None:
    held = CtrlCHeld()
    with held:
        try:
            _signal_lands()
        except KeyboardInterrupt:  # caught here: escaping, it would end the whole test run
            pytest.fail("Ctrl-C was raised inside the held span (in the middle of an import)")
        assert held.pressed
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # asyncio's runner's cue
    with pytest.raises(KeyboardInterrupt):
        _signal_lands()


def test_a_process_that_ignores_sigint_keeps_ignoring_it(sigint_default: None) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    held = CtrlCHeld()
    with held:
        _signal_lands()
    assert not held.pressed
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN


def test_serve_inline_ends_with_ctrl_c_held_during_its_start_and_lets_the_directory_go(
    sigint_default: None, tmp_path: Path
) -> None:
    """Ctrl-C right after the early answer (here, in `after_answer`) ends the start with a
    KeyboardInterrupt of our own, before the loop serves anything: the callers' status 130
    (cli/entry.py, cli/commands.py), the data directory's lock released, nothing read from stdin."""
    data_dir = str(tmp_path / "data")
    finished: list[str] = []

    def answered() -> None:  # stands for the imports the start runs after its answer
        _signal_lands()
        finished.append("after_answer")

    with pytest.raises(KeyboardInterrupt):
        serve_inline("acp", data_dir, {}, after_answer=answered)
    assert finished == ["after_answer"]  # not cut off where the signal landed
    open_checked(data_dir).close()  # not "in use by process N": the lock was released


class _InterruptedImport(types.ModuleType):
    """`askbridge.cli.commands` as Ctrl-C finds it when it lands while the module imports."""

    def __getattr__(self, name: str) -> object:
        raise KeyboardInterrupt


def test_ctrl_c_while_the_full_command_line_imports_is_130(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The console script's first import of the full command line (cli/commands.py and its parser,
    ~50-100 ms) is inside main's Ctrl-C handling too, not only what it runs."""
    monkeypatch.setitem(
        sys.modules, "askbridge.cli.commands", _InterruptedImport("askbridge.cli.commands")
    )
    try:
        status = entry.main(["host", "--status"])
    except KeyboardInterrupt:  # caught here: escaping, it would end the whole test run
        pytest.fail("Ctrl-C during the command line's import escaped main")
    assert status == EXIT_INTERRUPTED


def test_askbridge_host_holds_ctrl_c_while_it_starts_and_lets_the_directory_go(
    sigint_default: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`askbridge host` by hand: Ctrl-C while it starts (here, while it sets up its log,
    between the store's opening and the loop) ends it with our own KeyboardInterrupt once
    the start's imports are done, the data directory's lock released."""
    finished: list[str] = []

    def log_to_host_log(data_dir: Path) -> None:
        _signal_lands()
        finished.append("log")

    monkeypatch.setattr(daemon_main, "_log_to_host_log", log_to_host_log)
    data_dir = str(tmp_path / "data")
    with pytest.raises(KeyboardInterrupt):
        daemon_main.run_host(parse_args(["host", "--data-dir", data_dir]))
    assert finished == ["log"]  # not cut off where the signal landed
    open_checked(data_dir).close()


ORJSON_INTERRUPTED = """
import importlib.abc, os, signal, sys

class SigintAtOrjson(importlib.abc.MetaPathFinder):
    # SIGINT sent the moment `import orjson` begins: where Python raises it depends on
    # what runs next, and unheld that is orjson's own initialisation.
    def find_spec(self, name, path, target=None):
        if name == "orjson":
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, SigintAtOrjson())
try:
    import askbridge.protocol.text
except KeyboardInterrupt:
    print("orjson" in sys.modules and hasattr(sys.modules["orjson"], "dumps"))
"""


def test_ctrl_c_while_orjson_imports_is_raised_after_it_not_inside() -> None:
    """orjson's module initialisation crashes the interpreter (SIGSEGV) when a
    KeyboardInterrupt lands inside it, so protocol/text.py holds Ctrl-C while it imports:
    the interrupt still comes (the callers make it 130), once orjson is whole."""
    done = subprocess.run(
        [sys.executable, "-c", ORJSON_INTERRUPTED], capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "True\n", "")
