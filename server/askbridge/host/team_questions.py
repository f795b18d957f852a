"""Questions across hosts on the team store: any host's window answers, the database
decides which answer wins (G5, G6, M2, M5).

- A replica's open questions (a session another host runs, team_sessions.py) are read
  from its committed log, as its view shows them (P2), and shown as cards to this
  host's windows that render questions (`sync`, after every read of the replica, M3
  for later subscribers). When the owner's log settles one (its tool/result), the
  cards still out here are withdrawn: answered elsewhere (M2, M5).
- Every valid answer (V8, checked by the card) to a question with a call id, on a
  replica or on a session this host runs, is offered to the store first
  (`arbitrate`: `team.answers.offer`, with the door and client it came from); the
  question here then ends with the answer that won, this one or another host's, so
  answers from windows on two hosts settle it once and never twice (G6).
- The owner hears of every new answer (`serve`: the store's answer hints). An answer to
  a question open in its windows settles it exactly as one of its own windows would,
  withdrawing its cards. Settling with a stored answer marks it to be consumed by the
  call's tool/result in the commit that logs it (`will_use`; pg_answers.py), so an
  acknowledged answer is consumed once, even across a kill -9 of the owner.
- Late replies (L1-L7) to a question that went pending, from any host's window: checked
  as the owner would (L1 continued, L2 a reply queued, L3 V8, on the view here) and
  offered first (`take_late`). The one that gets in is taken: on the owner at once, on
  a replica by its owner when it hears of it (`_heard`); the inbox item that queues it
  consumes it. Every other is REPLY_QUEUED (G6, L2). A question of this host's that
  goes pending (its timed wait ended, or a repair after a takeover marked it
  continued, P7) is looked up once more (`on_view_changes`): an answer that got in
  meanwhile, here or on a host that died since, is taken as its late reply (G4, G8).
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

from askbridge.core import UserQuestionError, UserQuestionRequest, check_answer
from askbridge.core.question import Question, questions_from_wire
from askbridge.process.log_lines import field
from askbridge.protocol.errors import ErrorCode
from askbridge.protocol.vocabulary import Answer, Wait

from .agent.session import Session
from .asking.clients import Client
from .asking.fanout import QuestionFanout
from .asking.late_answers import LateAnswers, Take
from .asking.open_question import OpenQuestion, Spawn
from .asking.publishing import Publisher
from .store.team_records import AnsweredElsewhere

log = logging.getLogger("askbridge.host")


class Asking(Protocol):
    """What this module needs of host.py's Host."""

    @property
    def fanout(self) -> QuestionFanout: ...

    @property
    def sessions(self) -> dict[str, Session]: ...

    @property
    def spawn(self) -> Spawn: ...

    @property
    def late_answers(self) -> LateAnswers: ...

    @property
    def publisher(self) -> Publisher: ...

    async def get_session(self, session_id: str, client: Client | None = None) -> Session: ...


class TeamQuestions:
    def __init__(self, host: Asking, answers: Any, is_replica: Any) -> None:
        self._host = host
        self._answers = answers  # pg_answers.Answers
        self._is_replica = is_replica  # (session_id) -> bool
        self._shown: dict[str, dict[str, OpenQuestion]] = {}  # a replica's cards, by call
        self._taking: set[tuple[str, str]] = set()  # late replies this host is taking now
        self.cards: Any = None  # team_claims.TeamClaims: told when a replica's card shows, ends
        host.fanout.arbiter = self
        self._take: Take = host.late_answers.take  # the session's own decision (L1-L6)
        host.late_answers.take = self.take_late
        host.publisher.add_listener(self)

    async def serve(self) -> None:
        """The owner's side of G6: each new answer to a question open here settles it."""
        async for session_id, call_id in self._answers.hints.stream():
            try:
                await self._heard(session_id, call_id)
            except Exception as exc:  # the store failed: the answer stays for a catch-up
                log.warning("reading the answer to %s failed: %s", call_id, field(exc))

    def on_view_changes(self, session_id: str, changes: list[dict[str, Any]]) -> None:
        """A question of a session run here went pending: an answer that got in while it
        was open but was not used (it won as the wait ended, or its host died before
        this one took the session over) is its late reply (`_heard`, G4, G8)."""
        if session_id in self._host.sessions and not self._is_replica(session_id):
            for change in changes:
                if change.get("state") == "continued":
                    self._answers.hints.tell((session_id, change["callId"]))

    async def taken_over(self, session_id: str) -> None:
        """This host runs the session now (opened, repaired: P7): answers that got in
        while no host ran it are its late replies (G4, G8)."""
        for answer in await self._answers.unconsumed([session_id]):
            self._answers.hints.tell((answer.session_id, answer.call_id))

    def on_update(self, session_id: str, update: dict[str, Any]) -> None:
        """Updates are the windows' (publishing.py HostListener)."""

    async def _heard(self, session_id: str, call_id: str) -> None:
        if session_id not in self._host.sessions or self._is_replica(session_id):
            return  # another host's: its owner consumes it
        question = self._host.fanout.find(session_id, call_id)
        live = await self._answers.live(session_id, call_id)
        if live is None or live.consumed_seq is not None:
            return
        if question is not None:
            self._settle(question, live.answer, f"host {live.host} ({live.door})")
            return
        session = self._host.sessions.get(session_id)
        active = session.projection.entry(call_id) if session is not None else None
        if (session_id, call_id) in self._taking and live.host == self._answers.host_id:
            return  # offered here and won: `take_late` takes it
        if active is not None and active.state == "continued":  # a late reply (L4)
            self._answers.will_use(session_id, call_id)
            try:
                taken = await self._take(
                    session_id, call_id, Answer.model_validate(live.answer), None
                )
            except (UserQuestionError, ValueError) as exc:
                taken = False
                log.info("late reply to %s from host %s: %s", call_id, live.host, field(exc))
            if not taken:
                self._answers.used([(session_id, call_id, 0)])  # nothing carries it

    def arbitrate(self, question: OpenQuestion, client: Client, answer: Answer) -> bool:
        """G6: `answer` (valid, from `client`) is offered to the store; the question ends
        with whichever answer won."""
        call_id = question.call_id
        if call_id is None:
            return False  # a blocking ask outside any view: its host alone answers it

        async def offer() -> None:
            try:
                offered = await self._answers.offer(
                    question.session_id,
                    call_id,
                    answer.dump(),
                    door=client.door,
                    client=str(client.id),
                )
            except Exception as exc:  # the store failed: this answer did not count
                log.warning("answer to %s from client %s: %s", call_id, client.id, field(exc))
                return
            won = offered.answer
            if isinstance(offered, AnsweredElsewhere):  # M5: another window was first
                log.info("answer to %s from client %s: answered elsewhere", call_id, client.id)
            self._settle(question, won.answer, f"client {client.id}")

        self._host.spawn(offer)
        return True

    async def take_late(
        self, session_id: str, call_id: str, answer: Answer, client: Client | None
    ) -> bool:
        """A late reply from a window or caller here (L1-L7): checked as its owner would,
        then offered; the one the database lets in is taken (G6), every other is
        REPLY_QUEUED (L2)."""
        session = await self._host.get_session(session_id, client)
        active = session.projection.entry(call_id)
        if active is None or active.state != "continued":
            return False  # L1
        if session.inbox.queued_reply(call_id) is not None:
            raise UserQuestionError.of(ErrorCode.REPLY_QUEUED)  # L2, before BAD_ANSWER
        questions = questions_from_wire(active.questions)
        checked = check_answer(questions, answer, call_id)  # L3, V8
        self._taking.add((session_id, call_id))
        try:
            return await self._offer_late(session, call_id, checked, client)
        finally:
            self._taking.discard((session_id, call_id))

    async def _offer_late(
        self, session: Session, call_id: str, checked: Answer, client: Client | None
    ) -> bool:
        session_id = session.id
        offered = await self._answers.offer(
            session_id,
            call_id,
            checked.dump(),
            door=client.door if client is not None else None,
            client=str(client.id) if client is not None else None,
        )
        if isinstance(offered, AnsweredElsewhere):
            raise UserQuestionError.of(ErrorCode.REPLY_QUEUED)  # G6: another got in first
        if self._is_replica(session_id):
            return True  # its owner takes it when it hears of it (`_heard`)
        self._answers.will_use(session_id, call_id)
        try:
            taken = await self._take(session_id, call_id, checked, client)
        finally:  # consumed by the inbox item it committed, or carried by nothing
            self._answers.used([(session_id, call_id, 0)])
        return taken

    def _settle(self, question: OpenQuestion, payload: Any, by: str) -> None:
        try:
            answer = Answer.model_validate(payload)
        except ValueError as exc:
            log.info("stored answer to %s dropped: %s", question.call_id, field(exc))
            return
        session_id, call_id = question.session_id, question.call_id
        owned = not self._is_replica(session_id)
        if owned and not question.done and call_id is not None:
            self._answers.will_use(session_id, call_id)  # its tool/result consumes it
        question.settle_with(answer, by)

    def sync(self, session: Session) -> None:
        """A replica was read: cards for its open questions, withdrawn once settled (M2)."""
        shown = self._shown.setdefault(session.id, {})
        open_now = {q.call_id: q for q in session.projection.view().active if q.state == "open"}
        for call_id in [call_id for call_id in shown if call_id not in open_now]:
            shown.pop(call_id)()  # settled by its owner: answered elsewhere
            self._card_ended(session.id, call_id)
        for call_id, active in open_now.items():
            if call_id not in shown:
                request = UserQuestionRequest(
                    [Question.of(item) for item in active.questions],
                    wait=Wait(call_id=call_id, timed=True),
                    session_id=session.id,
                )
                shown[call_id] = self._host.fanout.show(request, _shown_only)
                if self.cards is not None:
                    self.cards.shown(session.id, call_id)
        if not shown:
            self._shown.pop(session.id, None)

    def forget(self, session_id: str) -> None:
        """The replica is gone here: its cards too."""
        for call_id, question in self._shown.pop(session_id, {}).items():
            question()
            self._card_ended(session_id, call_id)

    def _card_ended(self, session_id: str, call_id: str) -> None:
        if self.cards is not None:
            self.cards.ended(session_id, call_id)  # G7: the claims held on it end


def _shown_only(answer: Answer | None, error: Exception | None) -> None:
    """A replica's card ended here; its owner logs the outcome (G4)."""
