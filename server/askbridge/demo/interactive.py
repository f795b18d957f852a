"""The person at the keyboard: `InteractivePlayer` reads answers with prompt_toolkit.

`read()` awaits prompt_toolkit's async prompt, so the asyncio loop stays free
while the person types: the client keeps talking to the server, and when the
server withdraws the card (`$/cancelRequest` cancels the handler's task) the
prompt is cancelled like any other await and restores the terminal. While a
prompt is open the transcript is paused, so nothing scribbles over the input.
For a timed question the prompt's first line is a live countdown
(`WaitClock.status`, redrawn every 0.2 s) and the first keystroke claims the
wait (`WaitClock.start_hold`), which stops the server's clock. A line that
fails `check` is refused: the reason is shown above a fresh, empty prompt, so
the next try is not appended to the refused one. `watch()` (the question left
to time out) is a prompt too, showing the countdown: it never accepts a line,
and keys typed there get a word saying why instead of vanishing.
Ctrl-C / Ctrl-D raise `DemoQuit`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NoReturn

from prompt_toolkit import PromptSession
from prompt_toolkit.document import Document
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.validation import ValidationError, Validator
from rich.console import Console

from .terminal import Check, DemoQuit
from .transcript import Transcript
from .waitclock import WaitClock

Line = list[tuple[str, str]]
LET_IT_PASS = "Not this one: let it time out. You answer it in a moment, as a late reply."


class _Refuse(Validator):
    """Enter never accepts a line (the prompt of `watch`)."""

    def validate(self, document: Document) -> None:
        raise ValidationError(len(document.text), LET_IT_PASS)


class InteractivePlayer:
    def __init__(self, console: Console, transcript: Transcript) -> None:
        self.console, self.transcript = console, transcript

    async def read(
        self, label: str, check: Check, clock: WaitClock | None, scripted: list[str]
    ) -> str:
        refused: Line = []
        while True:
            prompt: Line = [*refused, ("bold", label), ("", " › ")]

            def message(prompt: Line = prompt) -> FormattedText:
                countdown: Line = [("fg:ansiyellow", clock.status() + "\n")] if clock else []
                return FormattedText([*countdown, *prompt])

            on_key = clock.start_hold if clock is not None else None
            text = await self._prompt(message, clock is not None, on_key)
            try:
                check(text)
            except ValueError as exc:
                refused = [("fg:ansired", f"✗ {exc}\n")]
                continue
            return text

    async def watch(self, clock: WaitClock) -> NoReturn:
        typed: list[bool] = []

        def message() -> FormattedText:
            said: Line = [("italic", LET_IT_PASS + "\n")] if typed else []
            status = clock.status(typing_stops_it=False)
            return FormattedText([("fg:ansiyellow", status + "\n"), *said, ("", "› ")])

        await self._prompt(message, True, lambda: typed.append(True), _Refuse())
        raise AssertionError("unreachable: _Refuse never lets the prompt return")

    async def _prompt(
        self,
        message: Callable[[], FormattedText],
        live: bool,
        on_key: Callable[[], None] | None = None,
        validator: Validator | None = None,
    ) -> str:
        """One prompt_toolkit prompt; `live` redraws the message (the countdown) every 0.2 s,
        which unlike a bottom toolbar shows on terminals that do not report the cursor."""
        session: PromptSession[str] = PromptSession()
        if on_key is not None:
            session.default_buffer.on_text_changed += lambda _buffer: on_key()
        with self.transcript.paused():
            try:
                return await session.prompt_async(
                    message,
                    validator=validator,
                    validate_while_typing=False,
                    refresh_interval=0.2 if live else 0,
                    handle_sigint=False,  # raw mode: Ctrl-C is a key here; SIGINT is the demo's
                )
            except (KeyboardInterrupt, EOFError):
                raise DemoQuit from None
