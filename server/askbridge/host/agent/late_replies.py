"""The core's late-reply handler (behavior.md L1–L4): whether a session takes a reply to a
question that went pending, and queueing it in the agent's inbox.

`UserQuestionService.answer` calls it (`set_late_reply_handler`, host.py) for
whichever client answered; the session is loaded first if needed (a reply may
come after a restart). Who answered and what happens next (the turn it wakes,
S12's log line) is the host's (`Host.answer_reply`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from askbridge.core import UserQuestionError, check_answer
from askbridge.protocol.errors import ErrorCode
from askbridge.protocol.vocabulary import Answer, AnswerItem, QuestionItem

from .session import Session
from .tools import reply_text


class LateReplies:
    def __init__(self, session: Callable[[str], Session]) -> None:
        self._session = session  # the session of an id, loaded first if needed

    async def answer(
        self, agent_id: str, session_id: str, call_id: str, batch: Sequence[AnswerItem]
    ) -> bool:
        session = self._session(session_id)
        if session.agent.id != agent_id:
            return False
        active = session.projection.entry(call_id)
        if active is None or active.state != "continued":
            return False  # L1
        if session.inbox.queued_reply(call_id) is not None:
            raise UserQuestionError.of(ErrorCode.REPLY_QUEUED)  # L2, before BAD_ANSWER
        questions = [QuestionItem.model_validate(q) for q in active.questions]
        checked = check_answer(questions, Answer(answers=list(batch)), call_id)  # L3, V8
        text = reply_text(
            call_id, [q.dump() for q in questions], [a.dump() for a in checked.answers]
        )
        session.enqueue_reply(call_id, text)  # L4: committed before True
        return True
