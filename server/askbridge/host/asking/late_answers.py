"""Where clients' replies to pending questions arrive (behavior.md L1–L7, M5, S12).

`LateAnswers.answer_reply` is `userQuestions/answer` (and ACP's
`_askbridge/answer`) from any client: whether the session takes it is the agent
room's (agent/late_replies.py, reached through the `take` host.py wires); this
module logs who answered and whether it was taken (S12). `late_answer` is L7: a
client answered a card the server had withdrawn; it is taken as a late reply if
its question went pending and the answer is valid, else dropped and logged.
`late_answer_callback` is what each door's card does with such an answer.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from askbridge.core import HarnessError, UserQuestionError, UserQuestionRequest
from askbridge.process.log_lines import field
from askbridge.protocol.vocabulary import Answer

from .clients import Client
from .open_question import Spawn

log = logging.getLogger("askbridge.host")

# (session id, call id, answer, the answering client or None for a caller) -> taken?
Take = Callable[[str, str, Answer, Client | None], Awaitable[bool]]


class LateAnswers:
    """host.py wires it: `take` decides (the session is loaded first and the client follows
    it, M1), `spawn` runs an L7 delivery in the host's task group while `running()`."""

    def __init__(self, take: Take, spawn: Spawn, running: Callable[[], bool]) -> None:
        # Public: on a team store the database decides first (G6: team_questions.py wraps it).
        self.take = take
        self._spawn = spawn
        self._running = running

    async def answer_reply(
        self, session_id: str, call_id: str, answer: Answer, client: Client | None = None
    ) -> bool:
        accepted = await self.take(session_id, call_id, answer, client)
        log.info(  # S12: who answered a pending question, and whether it was taken
            "late reply to %s from %s %s",
            field(call_id),
            f"client {client.id}" if client is not None else "a caller",
            "taken" if accepted else "dropped (not pending: answered, withdrawn or unknown)",
        )
        return accepted

    def late_answer(self, client: Client, session_id: str, call_id: str, answer: Answer) -> None:
        """L7: a client answered a card the server had withdrawn; a late reply if the
        question went pending and the answer is valid, else dropped and logged."""

        async def deliver() -> None:
            try:
                accepted = await self.answer_reply(session_id, call_id, answer, client)
            except UserQuestionError as exc:
                log.info("late answer to %s dropped: %s", field(call_id), field(exc.message))
                return
            log.info(
                "late answer to %s %s",
                field(call_id),
                "taken as a late reply" if accepted else "dropped",
            )

        if self._running():
            self._spawn(deliver)


def late_answer_callback(
    answers: LateAnswers,
    client: Client | None,
    request: UserQuestionRequest,
    build: Callable[[Any], Answer],
) -> Callable[[Any, Exception | None], None] | None:
    """L7, for a door's card: what to do with a reply that arrives after the card was
    withdrawn — `build` makes it an Answer, the host takes it as a late reply if its
    question went pending. None for a blocking ask (not in the view: no late reply)."""
    if request.wait is None or request.session_id is None:
        return None
    return _OnLate(answers, client, request, build)


class _OnLate:
    """`late_answer_callback`'s callback: a record, not a closure, as every card of a timed
    question holds one while it is out."""

    __slots__ = ("_answers", "_build", "_client", "_request")

    def __init__(
        self,
        answers: LateAnswers,
        client: Client | None,
        request: UserQuestionRequest,
        build: Callable[[Any], Answer],
    ) -> None:
        self._answers, self._client, self._request, self._build = answers, client, request, build

    def __call__(self, result: Any, error: Exception | None) -> None:
        wait, session_id, client = self._request.wait, self._request.session_id, self._client
        assert wait is not None and session_id is not None
        if error is not None or client is None:
            # S12: a withdrawn card answering with an error is the card closing (first
            # answer wins elsewhere, or the wait ended): nothing was dropped.
            log.debug("the card of %s closed after it was withdrawn: %s", wait.call_id, error)
            return
        try:
            answer = self._build(result)
        except (HarnessError, ValueError) as exc:  # pydantic's ValidationError is a ValueError
            log.info(
                "late reply to %s from client %s dropped: %s",
                field(wait.call_id),
                client.id,
                field(exc),
            )
            return
        log.info("late reply to %s from client %s", field(wait.call_id), client.id)
        self._answers.late_answer(client, session_id, wait.call_id, answer)
