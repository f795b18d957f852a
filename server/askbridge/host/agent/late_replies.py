"""The core's late-reply handler (behavior.md L1–L4): whether a session takes a reply to a
question that went pending, and queueing it in the agent's inbox.

`UserQuestionService.answer` calls `answer` (`set_late_reply_handler`, host.py);
a client's reply comes through `take` (asking/late_answers.py's `take`, wired in
host.py), which also makes the client follow the session (M1) and the turn the
reply wakes ask through that client's fallback. The session is loaded first if
needed (a reply may come after a restart). S12's log line is the asking room's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from askbridge.core import UserQuestionError, check_answer
from askbridge.core.question import questions_from_wire
from askbridge.protocol.errors import ErrorCode
from askbridge.protocol.vocabulary import Answer, AnswerItem

from .ports import Requester
from .session import Session


class LateReplies:
    def __init__(self, session: Callable[..., Awaitable[Session]]) -> None:
        # host.py's `Host.get_session(session_id, client=None)`: the session of an id,
        # loaded first if needed; a client given follows it (M1).
        self._session = session

    async def take(
        self, session_id: str, call_id: str, answer: Answer, client: Requester | None = None
    ) -> bool:
        """A reply from `client` (None: a programmatic caller); the turn it wakes asks
        through that client's fallback."""
        session = await self._session(session_id, client)
        return await self._answer(session, session.agent.id, call_id, answer.answers, client)

    async def answer(
        self, agent_id: str, session_id: str, call_id: str, batch: Sequence[AnswerItem]
    ) -> bool:
        return await self._answer(await self._session(session_id), agent_id, call_id, batch, None)

    async def _answer(
        self,
        session: Session,
        agent_id: str,
        call_id: str,
        batch: Sequence[AnswerItem],
        client: Requester | None,
    ) -> bool:
        if session.agent.id != agent_id:
            return False
        active = session.projection.entry(call_id)
        if active is None or active.state != "continued":
            return False  # L1
        if session.inbox.queued_reply(call_id) is not None or call_id in session.replies_logging:
            raise UserQuestionError.of(ErrorCode.REPLY_QUEUED)  # L2, before BAD_ANSWER
        questions = questions_from_wire(active.questions)
        checked = check_answer(questions, Answer(answers=list(batch)), call_id)  # L3, V8
        answers = [a.dump() for a in checked.answers]
        # L4: logged with its answers (and the text rendered from them), committed before True.
        # The inbox holds it once committed; until then `replies_logging` does (L2).
        session.replies_logging.add(call_id)
        try:
            await session.enqueue_reply(call_id, [q.dump() for q in questions], answers, client)
        finally:
            session.replies_logging.discard(call_id)
        return True
