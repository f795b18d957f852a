"""`CtrlCHeld`: Ctrl-C noted, not raised, while something must not be interrupted: a host
process's start imports (daemon/inline.py, daemon/main.py) and orjson's import
(protocol/text.py), whose module initialisation crashes the interpreter when a
KeyboardInterrupt lands inside it.

Standard library only (`signal`, imported when a span begins), importing nothing of
ours (a leaf, tests/unit/test_layers.py), so any layer may hold Ctrl-C and the inline
host's early answer pays nothing for it.
"""

from __future__ import annotations


class CtrlCHeld:
    """Ctrl-C held off while a host's start imports, up to its event loop: in the inline
    host (inline.py) from the early answer on, in `askbridge host` (main.py) from its
    first import of the host's modules on.

    Python raises KeyboardInterrupt wherever the main thread is when SIGINT lands, and
    during an import that can be where it is lost or turned into something else: inside
    an import lock's weakref callback it is printed as "Exception ignored" and dropped
    (the host then serves on, and Ctrl-C did nothing), and landing while modules and
    dataclasses are built it ended the process killed by SIGINT (status -2, no 130, no
    traceback): measured under load, about 1 Ctrl-C in 15 sent right after the early
    `initialize` answer, when the heavy imports run. So in this span SIGINT is only
    noted, and acted on (a KeyboardInterrupt raised in our own code) once it ends; it
    lasts as long as the imports (~0.1-0.2 s), and nothing in it waits for input. From
    the loop on, asyncio's runner turns Ctrl-C into the main task's cancellation. A
    process started with SIGINT ignored keeps it ignored."""

    __slots__ = ("_held", "pressed")

    def __init__(self) -> None:
        self.pressed = False
        self._held = False

    def __enter__(self) -> None:
        import signal  # as anyio's loop will, right after

        self._held = signal.getsignal(signal.SIGINT) is signal.default_int_handler
        if self._held:
            try:
                signal.signal(signal.SIGINT, self._press)
            except ValueError:  # not the main thread, where no KeyboardInterrupt lands
                self._held = False

    def _press(self, _signum: int, _frame: object) -> None:
        self.pressed = True

    def __exit__(self, *_exc: object) -> None:
        import signal

        if self._held:
            signal.signal(signal.SIGINT, signal.default_int_handler)


def import_the_event_loop() -> None:
    """Import what `anyio.run` will import (its asyncio backend), here inside a held span,
    so that Ctrl-C during that import is held like the rest of the start's imports.

    The backend's module is anyio's private one: anyio imports it lazily on the first
    `anyio.run` and has no public name that loads it. It is imported in this one place;
    left to `anyio.run`, its ~10 ms of imports (`python -X importtime`, after the host's own
    modules) fall outside the held span, where a Ctrl-C ends the process as the span exists
    to prevent."""
    import anyio._backends._asyncio  # noqa: F401
