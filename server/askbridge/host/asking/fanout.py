"""One question, every window: the host's answerer on the user-questions waterfall (M2, M3).

The host registers `QuestionFanout.listener` first on the core's waterfall.
For a request of a root session it opens an `OpenQuestion` (open_question.py):

- every follower of the session that renders questions is asked at once; a
  follower that subscribes while the question is open is asked then (M3);
- the first valid answer (V8) settles it; ASK_CANCELLED (the user dismissed
  the card) or ASK_TIMED_OUT (its countdown ran out, TW7) from any of them
  ends it too — those are the user's and the clock's word, not a client's
  failure. Then every other card is withdrawn: cancelling its ask makes the
  door send its cancel (`$/cancelRequest`, ACP `_askbridge/cancelAsk` and
  `$/cancel_request`), and a valid answer that still arrives for a question
  that went pending is a late reply (L7, the doors' `on_late`);
- a client whose card fails (an invalid answer, an error reply) drops out;
  when no card is left and one failed, the last failure is the outcome. A
  client that disconnects drops out silently: the question waits for another
  (a later subscriber, M3) until the turn ends — at the latest when the last
  follower leaves (M6);
- with no rendering follower, the fallback of the client whose prompt started
  the turn applies (showMessageRequest, an ACP form or permission) — outside a
  turn, the first follower's — else the rest of the waterfall; a timed
  question nobody can show stays open for a later subscriber until its
  deadline (pending, TW6/TW8).

The fan-out asks with a callback, as every waterfall listener does: an open
question is an `OpenQuestion` record and its cards are the links' callbacks
(the LSP relay's `ask_with_callback`); only what must wait in Python — a link without
`ask_with_callback`, the fallback — runs as a task in the host's task group, under a
cancel scope the question holds. Every answer it settles with is checked (V8)
here, once, the fallback's and the rest of the waterfall's too. Withdrawing it
(turn cancelled, unclaimed deadline, shutdown) withdraws every card and cancels
those tasks at once (A9).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any, Protocol

from askbridge.core import UserQuestionRequest, check_answer
from askbridge.core.waterfall import Next, Settle, Withdraw, await_callback, awaited
from askbridge.protocol.vocabulary import Answer

from .clients import Client, Subscribers
from .open_question import OpenQuestion, Spawn
from .question_log import log_asked, log_ended


class Arbiter(Protocol):
    """Who decides which answer wins when hosts share a store (G6: team_questions.py)."""

    def arbitrate(self, question: OpenQuestion, client: Client, answer: Answer) -> bool: ...


class QuestionFanout:
    """The answerer of the host's root sessions. host.py wires it: `subscribers` says who
    follows each session, `asks_here(session_id)` whether the session is a loaded root
    session (anything else goes down the waterfall), `requester(session_id)` whose
    prompt (or late reply) started its running turn — that client's fallback asks when no
    follower renders questions (M2) — and `spawn` runs what must wait in Python (a card
    sent as a task, the fallback) in the host's task group."""

    def __init__(
        self,
        subscribers: Subscribers,
        asks_here: Callable[[str], bool],
        requester: Callable[[str], Client | None],
        spawn: Spawn,
    ) -> None:
        self._subscribers = subscribers
        self._asks_here = asks_here
        self._requester = requester
        self._spawn = spawn
        self._open: dict[str, list[OpenQuestion]] = {}
        self.arbiter: Arbiter | None = None  # on a team store: the database's first answer

    def arbitrate(self, question: OpenQuestion, client: Client, answer: Answer) -> bool:
        """open_question.py `Owner`: True when the arbiter takes `answer` (G6)."""
        arbiter = self.arbiter
        return arbiter is not None and arbiter.arbitrate(question, client, answer)

    def find(self, session_id: str, call_id: str) -> OpenQuestion | None:
        """The question of `call_id` open in the session's windows, if any."""
        for question in self._open.get(session_id, ()):
            if question.call_id == call_id and not question.done:
                return question
        return None

    def show(self, request: UserQuestionRequest, settle: Settle) -> OpenQuestion:
        """Cards of a question asked on another host (G5): to every window that renders
        questions, now and when one subscribes (M3); no fallback, nothing down the waterfall
        (the host that runs the session asks those)."""
        assert request.session_id is not None
        question = OpenQuestion(request, self, settle)
        self._open.setdefault(request.session_id, []).append(question)
        for client in self._subscribers.renderers(request.session_id):
            question.offer(client)
        return question

    def abort(self, session_id: str) -> None:
        """`session/cancel`: every question open in the session ends ASK_ABORTED — the
        turn's, and a programmatic caller's outside any turn alike."""
        for question in list(self._open.get(session_id, ())):
            question.abort()

    def offer(self, client: Client, session_id: str) -> None:
        """M3: a client just subscribed; show it every question open in that session."""
        for question in list(self._open.get(session_id, ())):
            question.offer(client)

    def listener(self, request: UserQuestionRequest, next_: Next, settle: Settle) -> Withdraw:
        """The core's first listener: open the question in its session's windows, or pass
        it on; `settle` is called once with the checked answer or the error, unless the
        returned withdraw comes first."""
        session_id = request.session_id
        if session_id is None or not self._asks_here(session_id):
            return self._pass_on(request, next_, settle)
        question = OpenQuestion(request, self, settle)
        self._open.setdefault(session_id, []).append(question)
        renderers = self._subscribers.renderers(session_id)
        # Whose fallback it would be is named only when no window is asked (S12), the
        # waterfall's path, which looks it up anyway.
        log_asked(
            question, session_id, renderers, None if renderers else self._rest_client(session_id)
        )
        for client in renderers:
            question.offer(client)
        if not renderers and not question.done:
            question.ask_rest(lambda: self._rest(session_id, request, next_))
        return question  # calling it withdraws it

    def spawn(self, fn: Callable[[], Coroutine[Any, Any, Any]]) -> None:
        """Run what an open question must await in Python (open_question.py `Owner`)."""
        self._spawn(fn)

    def question_ended(self, question: OpenQuestion) -> None:
        """An open question ended (open_question.py `Ends`): forget it, settle the core."""
        questions = self._open.get(question.session_id, [])
        if question in questions:
            questions.remove(question)
        if not questions:
            self._open.pop(question.session_id, None)
        log_ended(question)
        if question.answer is not None or question.error is not None:
            question.settle(question.answer, question.error)

    def _pass_on(self, request: UserQuestionRequest, next_: Next, settle: Settle) -> Withdraw:
        """Not a root session's question: the rest of the waterfall (V8 here)."""
        return next_(_Checked(request, settle))

    def _rest_client(self, session_id: str) -> Client | None:
        client = self._requester(session_id)
        if client is None or not client.attached:
            # Asked outside a turn (a programmatic caller, an external agent): the first
            # follower's own way applies.
            client = next(iter(self._subscribers.of(session_id)), None)
        return client if client is not None and client.attached else None

    async def _rest(self, session_id: str, request: UserQuestionRequest, next_: Next) -> Answer:
        client = self._rest_client(session_id)
        if client is not None:
            return await client.link.fallback(request, awaited(next_))
        return await await_callback(next_)


class _Checked:
    """The settle of a question passed on: the rest's answer checked (V8) on its way back."""

    __slots__ = ("_request", "_settle")

    def __init__(self, request: UserQuestionRequest, settle: Settle) -> None:
        self._request, self._settle = request, settle

    def __call__(self, answer: Answer | None, error: Exception | None) -> None:
        if answer is not None:
            request = self._request
            call_id = request.wait.call_id if request.wait is not None else None
            try:
                answer = check_answer(request.questions, answer, call_id)
            except Exception as exc:
                answer, error = None, exc
        self._settle(answer, error)
