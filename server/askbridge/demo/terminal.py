"""The demo's terminal UI: question cards drawn with rich, and the `Player` that answers them.

Everything a card shows from the agent is passed to rich as `Text` (never as
markup) with its control characters escaped (`shown`, S17): a question cannot
restyle the terminal, move the cursor, set its title or write the clipboard.

`show_stage` / `question_card` draw a card: the header as the panel title,
the question, its detail as markdown (when a programmatic caller supplied
one), then the numbered options with their descriptions and a last "Other"
entry. Answers are read line by line by a `Player`: `read()` returns one line
that passed `check`; `watch()` shows a countdown without taking input (for
the question the person is asked to let time out) and returns only by being
cancelled. Two players exist:

- `interactive.InteractivePlayer`: the person, at a prompt_toolkit prompt
  (imported only for interactive runs, so `--auto` needs no terminal library);
- `AutoPlayer` here: "types" the guide's scripted lines, claiming a timed wait
  first, exactly where a person's first keystroke would.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NoReturn, Protocol

import anyio
from rich.console import Console, Group, RenderableType
from rich.markdown import Markdown
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from askbridge.process.log_lines import escaped
from askbridge.protocol.vocabulary import QuestionItem

from .answers import OTHER_DESCRIPTION, OTHER_LABEL
from .guide import Stage
from .waitclock import WaitClock

Check = Callable[[str], None]  # raises ValueError with the sentence to show


def shown(text: str, style: str = "") -> Text:
    """Text from outside (the model, the server) as rich draws it: no markup read, control
    characters shown escaped, lines kept (S17)."""
    return Text(escaped(text, newlines=True), style=style)


def shown_line(*parts: str | tuple[str, str]) -> Text:
    """`Text.assemble` of (text, style) parts, each shown as `shown` shows it."""
    return Text.assemble(
        *(
            escaped(part, newlines=True)
            if isinstance(part, str)
            else (escaped(part[0], newlines=True), part[1])
            for part in parts
        )
    )


class DemoQuit(Exception):
    """The person pressed Ctrl-C or Ctrl-D at a prompt."""


def show_stage(console: Console, stage: Stage) -> None:
    console.print()
    console.print(shown(f"▶ {stage.title}", "bold magenta"))  # a title may name a call id
    if stage.hint:
        console.print(shown(stage.hint, "italic"))


def question_card(question: QuestionItem) -> Panel:
    parts: list[RenderableType] = [shown(question.question, "bold")]
    if question.detail:
        # A link shows where it goes (no OSC 8 hyperlink whose text could say otherwise).
        parts.append(Markdown(escaped(question.detail, newlines=True), hyperlinks=False))
    if question.options:
        menu = Table.grid(padding=(0, 2))
        menu.add_column(justify="right", style="bold cyan")
        menu.add_column(style="bold")
        menu.add_column(style="dim")
        for n, option in enumerate(question.options, start=1):
            menu.add_row(str(n), shown(option.label), shown(option.description or ""))
        menu.add_row(str(len(question.options) + 1), OTHER_LABEL, OTHER_DESCRIPTION)
        parts.append(menu)
    kind = "several answers allowed" if question.multi_select else "one answer"
    if not question.options:
        kind = "free text"
    return Panel(
        Group(*parts),
        title=shown(question.header or "Question", "bold"),
        title_align="left",
        subtitle=shown(f"{question.id} · {kind}", "dim"),
        subtitle_align="right",
        expand=False,
        padding=(0, 1),
    )


class Player(Protocol):
    async def read(
        self, label: str, check: Check, clock: WaitClock | None, scripted: list[str]
    ) -> str: ...

    async def watch(self, clock: WaitClock) -> NoReturn: ...


class AutoPlayer:
    """Answers from the guide's scripted lines, echoing each as if typed."""

    def __init__(self, console: Console, pace: float = 0.15) -> None:
        self.console, self.pace = console, pace

    async def read(
        self, label: str, check: Check, clock: WaitClock | None, scripted: list[str]
    ) -> str:
        if not scripted:
            raise RuntimeError(f"the demo guide has no scripted line left for {label!r}")
        line = scripted.pop(0)
        if clock is not None:
            await clock.hold()  # where a person's first keystroke would claim the wait
        await anyio.sleep(self.pace)
        check(line)
        self.console.print(
            Text.assemble((label, "bold"), " › ", line, ("   (typed by --auto)", "dim"))
        )
        return line

    async def watch(self, clock: WaitClock) -> NoReturn:
        self.console.print(Text(clock.status(typing_stops_it=False) + " · --auto lets it pass"))
        await anyio.sleep_forever()
        raise AssertionError("unreachable: sleep_forever returns only by being cancelled")
