"""One demo session from start to finish, against a real `askbridge serve` subprocess.

`DemoSession.run()` starts the server through `AskbridgeClient.connect` with the
built-in script model in timed mode, opens a session and sends the guide's
prompt. The scripted agent then asks four questions; `_on_ask` answers each
`userQuestions/ask` through the player (the person, or `--auto`):

1. options with descriptions and Other; 2. multi-select plus custom text;
3. a timed question whose wait is claimed while typing (`WaitClock`);
4. a 5 s question left to time out: the server cancels the card
   (`$/cancelRequest`), the model gets pending and the view marks it `continued`.

Cards are shown one at a time, in the order asked, so a card the server
withdrew says so under its own heading before the next card is drawn.
When the prompt's turn has ended, every `continued` question is answered late
(`userQuestions/answer`), the ones the guide lets pass first (the script's late
turns speak of them in that order: question 3 may have run out too); each reply
wakes the agent into a new turn (cause `inbox`) and the demo waits for it to end.
`run()` returns the exit status: 0 when every step happened, 1 when the server did something else,
130 when the person quit with Ctrl-C / Ctrl-D (the turn is cancelled with
`session/cancel` and the server shut down cleanly).
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import TaskGroup
from rich.console import Console
from rich.markdown import Markdown
from rich.panel import Panel

from askbridge.core.errors import UserQuestionError
from askbridge.protocol.errors import ErrorCode
from askbridge.protocol.vocabulary import QuestionItem
from askbridge.testing import AskbridgeClient, Claim

from .guide import Guide, Stage
from .reading import AnswerReader
from .story import Story
from .terminal import DemoQuit, Player, question_card, show_stage, shown_line
from .transcript import Transcript
from .waitclock import WaitClock

DEFAULT_ASK_TIMEOUT_S = 60  # the script gives every call its own timeout; this is a fallback
TURN_TIMEOUT_S = 20  # how long the demo waits for a woken turn before calling it a failure


class DemoFailed(Exception):
    """The server did not do what the demo expects; the message says what."""


class DemoSession:
    def __init__(
        self,
        console: Console,
        make_player: Callable[[Transcript], Player],  # the player pauses the transcript
        guide: Guide,
        script: dict[str, Any],
        data_dir: Path,
        data_note: str = "",  # the outro's last words on where the session's log is
    ) -> None:
        self.console, self.guide, self.script, self.data_dir = console, guide, script, data_dir
        self.data_note = data_note
        self.story = Story()
        self._make_player = make_player
        self._quit = False
        self._open_cards = 0
        self.session_id = ""  # set once session/new has answered

    def line(self, *parts: str | tuple[str, str]) -> None:
        self.console.print(shown_line(*parts))

    async def run(self) -> int:
        self.console.print(Panel(Markdown(self.guide.intro), title="askbridge demo", expand=False))
        self.line(("data dir: ", "dim"), str(self.data_dir))
        self._no_cards = anyio.Event()
        self._no_cards.set()
        self._one_card = anyio.Lock()
        try:
            await self._run()
        except DemoFailed as exc:
            self.line(("demo failed: ", "bold red"), str(exc))
            return 1
        if self._quit:
            self.line(("demo stopped.", "dim"))
            return 130
        self.console.print()
        outro = self.story.outro(self.guide.outro, self.data_note)
        self.console.print(Panel(Markdown(outro), title="done", expand=False))
        return 0

    async def _run(self) -> None:
        async with AskbridgeClient.connect(
            data_dir=self.data_dir,
            host="inline",  # H3: the demo is its data directory's own host
            model=self.script,
            ask_mode="timed",
            ask_timeout=DEFAULT_ASK_TIMEOUT_S,
            # The terminal is the UI; host.log at INFO, as a host started by a front door.
            args=["--log-file", str(self.data_dir / "host.log"), "--log-level", "INFO"],
            start_new_session=True,  # Ctrl-C reaches the demo, which then shuts the server down
            echo_stderr=False,  # a start failure is told in one line by run_demo
        ) as client:
            self.client = client
            self.transcript = Transcript(self.console, client)
            self.player: Player = self._make_player(self.transcript)
            self.reader = AnswerReader(self.console, self.player, self.story, self.line)
            client.answer_with(self._on_ask)
            async with anyio.create_task_group() as tg:
                self.background: TaskGroup = tg
                self._story_scope = anyio.CancelScope()  # before anything can call _stop()
                tg.start_soon(self.transcript.follow)
                tg.start_soon(self._stop_on_sigint)
                try:
                    with self._story_scope:
                        await self._story()
                except DemoQuit:
                    self._quit = True
                await self._cards_closed()
                if self._quit:
                    await self._turns_ended()  # show how the cancelled turn ended
                self.transcript.flush()
                tg.cancel_scope.cancel()

    async def _stop_on_sigint(self) -> None:
        """Ctrl-C outside a prompt (the terminal is not in raw mode then) stops the demo:
        the turn is cancelled and the server shut down, as after Ctrl-C at a prompt."""
        try:
            with anyio.open_signal_receiver(signal.SIGINT) as signals:
                async for _ in signals:
                    self._stop()
        except NotImplementedError:  # no signal handlers (Windows): KeyboardInterrupt applies
            return

    def _stop(self) -> None:
        self._quit = True
        if self.session_id:
            self.client.cancel(self.session_id)  # the server withdraws any open card
        self._story_scope.cancel()

    async def _story(self) -> None:
        client = self.client
        sid = self.session_id = await client.new_session(cwd=os.getcwd())
        self.transcript.session_id = sid
        self.line(("server: ", "dim"), f"askbridge serve, pid {client.process.pid}")
        self.line(("session: ", "dim"), sid)
        self.console.print()
        self.line(("you › ", "bold green"), self.guide.prompt)
        stop = await client.prompt(sid, self.guide.prompt, timeout=None)  # a person answers
        await self._cards_closed()
        self.transcript.flush()
        if self._quit:
            return
        if stop != "end_turn":
            raise DemoFailed(f"the prompt's turn ended with {stop!r}, not 'end_turn'")
        await self._answer_late()

    # -- the questions the agent asks -----------------------------------------------------

    async def _on_ask(self, params: dict[str, Any]) -> dict[str, Any]:
        if self._quit:  # a question that raced the person's Ctrl-C: never shown
            raise UserQuestionError.of(ErrorCode.ASK_CANCELLED)
        self._open_cards += 1
        if self._open_cards == 1:
            self._no_cards = anyio.Event()
        try:
            # One card at a time, in the order asked: the server may send the next question
            # before the card it withdrew has finished closing (its "clock ran out" line
            # belongs under its own heading, not the next one's).
            async with self._one_card:
                self.transcript.flush()
                # Hold the transcript while the card is up: what the server sends meanwhile
                # (e.g. the pending result after the card is cancelled) prints after it.
                with self.transcript.paused():
                    return await self._card(params)
        finally:
            self._open_cards -= 1
            if not self._open_cards:
                self._no_cards.set()

    async def _cards_closed(self) -> None:
        """Wait for every card to close: the server may answer the prompt before a
        cancelled card's handler has run its cancellation."""
        with anyio.move_on_after(5):
            await self._no_cards.wait()
        if self._open_cards:
            raise DemoFailed("a question card is still open after its turn ended")

    async def _card(self, params: dict[str, Any]) -> dict[str, Any]:
        questions = [QuestionItem.model_validate(q) for q in params.get("questions", [])]
        wait = params.get("wait") or {}
        call_id = str(wait.get("callId", ""))
        stage = self.guide.stage(call_id)
        scripted = list(stage.auto)
        show_stage(self.console, stage)
        clock: WaitClock | None = None
        try:
            if wait.get("timed"):
                clock = WaitClock(self.client, self.session_id, call_id, self.background)
                await clock.read_deadline()
            if stage.let_pass and clock is not None:
                for question in questions:
                    self.console.print(question_card(question))
                await self.player.watch(clock)  # ends only when the server cancels the card
            answers = [await self.reader.read(q, scripted, clock) for q in questions]
        except anyio.get_cancelled_exc_class():
            if clock is not None:
                clock.release()
            if not self._quit:
                self.story.pending(call_id)
                self.line(
                    ("  ⌛ the server's clock ran out: ", "yellow"),
                    "it closed this card ($/cancelRequest) and the agent gets pending",
                )
            raise
        except DemoQuit:
            # Cancel the turn before answering, so the script's next question is never sent.
            if clock is not None:
                clock.release()
            self._stop()
            raise UserQuestionError.of(ErrorCode.ASK_CANCELLED) from None
        self.story.answered(stage.title, questions, answers)
        if clock is not None and clock.claim is not None:
            self.transcript.claimed.add(call_id)
            self.background.start_soon(self._release_claim_later, clock.claim)
        return {"answers": answers}

    async def _release_claim_later(self, claim: Claim) -> None:
        """The server ends the claim with the wait (attachWait answers null, TW10); should
        that not happen, release it ourselves rather than leave it behind."""
        with anyio.move_on_after(5):
            await claim.ended.wait()
        claim.release()

    # -- late answers ---------------------------------------------------------------------

    async def _answer_late(self) -> None:
        sid = self.session_id
        try:
            continued = await self.client.wait_for(self._continued, timeout=5)
        except TimeoutError:
            raise DemoFailed("no question was left pending (state 'continued')") from None
        # The questions the person was told to let pass first: the script's late turns
        # speak of them first, whatever else also ran out of time.
        continued.sort(key=lambda item: not self.guide.stage(str(item["callId"])).let_pass)
        for item in continued:
            call_id = str(item["callId"])
            title = f"{self.guide.late_title}: {call_id}"
            show_stage(self.console, Stage(title=title, hint=self.guide.late_hint))
            scripted = list(self.guide.stage(call_id).late_auto)
            questions = [QuestionItem.model_validate(q) for q in item["questions"]]
            answers = [await self.reader.read(q, scripted, None) for q in questions]
            turns_ended = len(self.client.updates(sid, "turn_ended"))
            accepted = await self.client.answer_late(sid, call_id, {"answers": answers})
            self.line(("  userQuestions/answer → ", "dim"), "accepted" if accepted else "refused")
            if not accepted:
                raise DemoFailed(f"the server refused the late answer to {call_id}")
            try:
                await self._turn_ended_after(turns_ended)
            except TimeoutError:
                raise DemoFailed("the late answer did not wake the agent into a turn") from None
            self.transcript.flush()
            woken = self.client.updates(sid, "turn_started")[-1]
            if woken.get("cause") != "inbox":
                raise DemoFailed(f"the woken turn's cause is {woken.get('cause')!r}, not 'inbox'")
            self.story.answered_late(call_id, str(woken.get("turnId")))

    async def _turns_ended(self) -> None:
        """Wait (briefly) until every turn that started has ended."""
        updates, sid = self.client.updates, self.session_id
        with anyio.move_on_after(5):
            await self.client.wait_for(
                lambda: len(updates(sid, "turn_ended")) >= len(updates(sid, "turn_started"))
            )

    async def _turn_ended_after(self, count: int) -> None:
        """Wait until more than `count` turns of the session have ended."""
        ended = self.client.updates
        await self.client.wait_for(
            lambda: len(ended(self.session_id, "turn_ended")) > count, timeout=TURN_TIMEOUT_S
        )

    def _continued(self) -> list[dict[str, Any]]:
        view = self.client.views.get(self.session_id) or {}
        return [item for item in view.get("active", []) if item.get("state") == "continued"]
