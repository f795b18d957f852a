"""`AnswerReader`: one question shown to the player and its answer item read back.

A card's questions and a late answer's are read the same way: the card
drawn, typed lines checked and turned into an answer item (answers.py), and,
for a timed wait, the claim the first keystroke made told and noted for the
outro. Separate from `DemoSession` (session.py), which decides when a
question is read and what the server must do around it; this part only talks
to the person (or `--auto`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.console import Console

from askbridge.protocol.vocabulary import QuestionItem

from .answers import Choice, answer_item, check_custom, choice_hint, parse_choice, takes_numbers
from .story import Story
from .terminal import Player, question_card
from .waitclock import WaitClock

Line = Callable[..., None]  # DemoSession.line: print styled parts as one line


class AnswerReader:
    def __init__(self, console: Console, player: Player, story: Story, line: Line) -> None:
        self.console, self.player, self.story, self.line = console, player, story, line

    async def read(
        self, question: QuestionItem, scripted: list[str], clock: WaitClock | None
    ) -> dict[str, Any]:
        """Show one question and read its answer item."""
        self.console.print(question_card(question))
        if not takes_numbers(question):
            text = await self.player.read("your answer", lambda _t: None, clock, scripted)
            await self._report_claim(clock)
            return answer_item(question, Choice([], False), text.strip() or None)

        def check(text: str) -> None:
            parse_choice(text, question)

        label = f"choose {choice_hint(question)}"
        choice = parse_choice(await self.player.read(label, check, clock, scripted), question)
        custom = None
        if choice.other:
            custom = (await self.player.read("Other", check_custom, clock, scripted)).strip()
        await self._report_claim(clock)
        return answer_item(question, choice, custom)

    async def _report_claim(self, clock: WaitClock | None) -> None:
        if clock is None:
            return
        await clock.settle()
        if clock.claim is None:
            return
        if clock.held_with_ms is None:
            self.line(("  the wait had already ended when this terminal tried to claim it", "dim"))
            return
        self.story.claimed(clock.call_id, clock.held_with_ms)
        self.line(
            ("  ⏸ claimed the wait", "bold yellow"),
            " (userQuestions/attachWait) at the first keystroke: the server's clock stopped "
            f"with {clock.held_with_ms / 1000:.1f} s left",
        )
