"""The person at the keyboard: `InteractivePlayer` reads answers with prompt_toolkit.

`read()` awaits prompt_toolkit's async prompt, so the asyncio loop stays free
while the person types: the client keeps talking to the server, and when the
server withdraws the card (`$/cancelRequest` cancels the handler's task) the
prompt is cancelled like any other await and restores the terminal. While a
prompt is open the transcript is paused, so nothing scribbles over the input.
For a timed question the prompt's first line is a live countdown
(`WaitClock.status`, redrawn every 0.2 s) and the first keystroke claims the
wait (`WaitClock.hold_soon`), which stops the server's clock. A line that
fails `check` is refused in place, with the reason under the prompt.
Ctrl-C / Ctrl-D raise `DemoQuit`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import NoReturn

import anyio
from prompt_toolkit import PromptSession
from prompt_toolkit.document import Document
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.validation import ValidationError, Validator
from rich.console import Console
from rich.live import Live
from rich.text import Text

from .terminal import Check, DemoQuit
from .transcript import Transcript
from .waitclock import WaitClock


class _CheckValidator(Validator):
    def __init__(self, check: Check) -> None:
        self.check = check

    def validate(self, document: Document) -> None:
        try:
            self.check(document.text)
        except ValueError as exc:
            raise ValidationError(len(document.text), str(exc)) from None


class InteractivePlayer:
    def __init__(self, console: Console, transcript: Transcript) -> None:
        self.console, self.transcript = console, transcript

    async def read(
        self, label: str, check: Check, clock: WaitClock | None, scripted: list[str]
    ) -> str:
        session: PromptSession[str] = PromptSession()
        prompt: list[tuple[str, str]] = [("bold", label), ("", " › ")]
        message: Callable[[], FormattedText] | FormattedText = FormattedText(prompt)
        if clock is not None:
            session.default_buffer.on_text_changed += lambda _buffer: clock.hold_soon()

            # The countdown is the prompt's first line, redrawn by refresh_interval: unlike
            # a bottom toolbar it shows on terminals that do not report the cursor position.
            def message() -> FormattedText:
                return FormattedText([("fg:ansiyellow", clock.status() + "\n"), *prompt])

        with self.transcript.paused():
            try:
                return await session.prompt_async(
                    message,
                    validator=_CheckValidator(check),
                    validate_while_typing=False,
                    refresh_interval=0.2 if clock is not None else 0,
                    handle_sigint=False,  # raw mode: Ctrl-C is a key here; SIGINT is the demo's
                )
            except (KeyboardInterrupt, EOFError):
                raise DemoQuit from None

    async def watch(self, clock: WaitClock) -> NoReturn:
        def render() -> Text:
            return Text(clock.status(typing_stops_it=False), style="yellow")

        try:
            with Live(render(), console=self.console, auto_refresh=False, transient=True) as live:
                while True:
                    live.update(render(), refresh=True)
                    await anyio.sleep(0.2)
        finally:
            _discard_typeahead()  # keys pressed here must not answer the next prompt


def _discard_typeahead() -> None:
    try:
        import termios
    except ImportError:
        return  # not POSIX: nothing we could drop
    try:
        termios.tcflush(sys.stdin.fileno(), termios.TCIFLUSH)
    except (termios.error, OSError, ValueError):
        pass  # stdin is not a terminal
