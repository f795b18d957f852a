"""Ctrl-C ends any command with status 130 and no traceback (cli.py), even when it lands
inside an import that Python reports as another exception (entry.interrupted)."""

from __future__ import annotations

import pytest

from askbridge import cli
from askbridge.entry import EXIT_INTERRUPTED, interrupted


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

    monkeypatch.setattr(cli, "_run", interrupted_run)
    assert cli.main(["schema", "--out", "unused"]) == EXIT_INTERRUPTED

    def failing_run(args: object) -> int:
        raise RuntimeError("a real failure")

    monkeypatch.setattr(cli, "_run", failing_run)
    with pytest.raises(RuntimeError, match="a real failure"):
        cli.main(["schema", "--out", "unused"])
