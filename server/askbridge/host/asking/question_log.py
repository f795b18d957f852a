"""S12: the INFO lines that tell a question's life in host.log, without its text.

Asked (session, call id, timed or blocking, intent, where it went: n windows, the
fallback of a client, or nobody), then how its asking ended: answered by which
client, pending (no answer before its timeout), dismissed, withdrawn (why), with
the other cards withdrawn because of it — first answer wins, which is not a
dropped reply. Question and answer text only at DEBUG. Late replies are logged
where they arrive (late_answers.py). A call id is the model's: quoted when it is not
one plain token (`field`, S17).
"""

from __future__ import annotations

from logging import DEBUG, INFO
from typing import TYPE_CHECKING

from askbridge.process.log_lines import LeanLogger, field
from askbridge.protocol.errors import ErrorCode

from .open_question import error_code

if TYPE_CHECKING:
    from askbridge.core.question import Question

    from .clients import Client
    from .open_question import OpenQuestion

log = LeanLogger("askbridge.host")  # S12: its lines made without a LogRecord


def log_claim(call_id: str, client_id: int, claimed: bool) -> None:
    """Who holds a timed question's wait (C1), and when it lets go: every door's claims."""
    log.info(
        "question %s %s by client %s",
        field(call_id),
        "claimed" if claimed else "released",
        client_id,
    )


def log_asked(
    question: OpenQuestion, session_id: str, renderers: list[Client], rest: Client | None
) -> None:
    """S12: a question asked — where it went, without its text (that only at DEBUG)."""
    if not log.isEnabledFor(INFO):
        return  # its lines are INFO and DEBUG (an inline host logs at WARNING): not built
    if renderers:
        n = len(renderers)
        where = (
            f"{n} window{'s' if n != 1 else ''} (clients {', '.join(str(c.id) for c in renderers)})"
        )
    elif rest is not None:
        where = f"the fallback of client {rest.id} ({rest.door})"
    else:
        where = "nobody (the waterfall)"
    items = question.request.questions
    count = len(items)
    # One question (nearly every ask) is one intent: no set to build and sort.
    intents = [_intent_of(items[0])] if count == 1 else sorted({_intent_of(q) for q in items})
    log.info(
        "question %s asked in session %s (%s, %s, %d item%s): to %s",
        field(question.call_id) if question.call_id else "(blocking)",
        session_id,
        "timed" if question.timed else "blocking",
        "/".join(intents),
        count,
        "" if count == 1 else "s",
        where,
    )
    if log.isEnabledFor(DEBUG):
        texts = [q.question for q in question.request.questions]
        log.debug("question %s text: %s", question.call_id, texts)


def _intent_of(item: Question) -> str:
    return item.intent.kind if item.intent is not None else "question"


def log_ended(question: OpenQuestion) -> None:
    """S12: how a question's asking ended: answered (by whom), pending, or withdrawn (why).
    The cards still shown elsewhere are withdrawn because it ended: first answer wins."""
    if not log.isEnabledFor(INFO):
        return  # every line below is INFO or DEBUG (an inline host logs at WARNING)
    call = field(question.call_id) if question.call_id else "(blocking)"
    others = question.asked - (1 if (question.by or "").startswith("client") else 0)
    if question.answer is None and question.error is None:  # ended from outside: the timed
        # clock, a cancel
        ended = "pending: no answer before its timeout" if question.timed else "withdrawn"
        log.info(
            "question %s %s; withdrawn from %d card%s",
            call,
            ended,
            others,
            "s" if others != 1 else "",
        )
        return
    withdrawn = (
        f"; withdrawn from {others} other card{'s' if others != 1 else ''}" if others else ""
    )
    if question.error is None:
        log.info("question %s answered by %s%s", call, question.by or "?", withdrawn)
        if question.answer is not None and log.isEnabledFor(DEBUG):
            log.debug("question %s answer: %s", call, question.answer.answers)
        return
    code = error_code(question.error)
    if code == ErrorCode.ASK_TIMED_OUT and question.timed:
        log.info("question %s pending: no answer before its timeout%s", call, withdrawn)
    elif code == ErrorCode.ASK_CANCELLED:
        log.info("question %s dismissed by %s%s", call, question.by or "?", withdrawn)
    elif code == ErrorCode.ASK_ABORTED:
        log.info("question %s withdrawn: the turn was cancelled%s", call, withdrawn)
    else:
        log.info("question %s ended: %s%s", call, field(code or question.error), withdrawn)
