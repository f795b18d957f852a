"""Semantic checks of questions (V3 intents, A5) and of answers (V8, L3).

Pure functions over questions (core/question.py) and answers; they raise UserQuestionError with
BAD_INTENT / BAD_ANSWER and the exact sentences of behavior.md. An answer's
`custom` must be storable text (S3) within its S1 limit; a selected label that
is not an option label (a lone surrogate cannot be one) is refused by V8.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from askbridge.protocol.errors import ErrorCode
from askbridge.protocol.text import LONE_SURROGATE_MESSAGE, has_lone_surrogate
from askbridge.protocol.vocabulary import (
    Answer,
    AnswerItem,
    ApprovalIntent,
    PlanReviewIntent,
    UnknownIntent,
)

from .errors import UserQuestionError
from .limits import MAX_CUSTOM, too_long
from .question import Question


def _bad_intent(message: str) -> UserQuestionError:
    return UserQuestionError(message, ErrorCode.BAD_INTENT)


def validate_intents(questions: Sequence[Question], *, timed: bool = False) -> None:
    """A5 / V3: every intent is valid for its question and batch; the first failure wins."""
    for q in questions:
        intent = q.intent
        if intent is None:
            continue
        prefix = f"question {q.id} declares intent {intent.kind}"
        if isinstance(intent, UnknownIntent):
            raise _bad_intent(f"question {q.id} declares unknown intent {json.dumps(intent.kind)}")
        labels = q.option_labels()
        # The approve-label rule comes before the detail rule (A5).
        if intent.approve not in labels:
            label = json.dumps(intent.approve)
            raise _bad_intent(f"{prefix} whose approve label {label} names none of its options")
        if not q.detail:
            raise _bad_intent(f"{prefix} without the detail it reviews")
        if isinstance(intent, PlanReviewIntent):
            continue
        assert isinstance(intent, ApprovalIntent)
        _validate_approval(q, intent, labels, len(questions), timed, prefix)


def _validate_approval(
    q: Question,
    intent: ApprovalIntent,
    labels: list[str],
    batch_size: int,
    timed: bool,
    prefix: str,
) -> None:
    if batch_size != 1:
        raise _bad_intent(f"{prefix} but approval must be the only question of its batch")
    if q.is_multi:
        raise _bad_intent(f"{prefix} but approval cannot be multi-select")
    if timed:
        raise _bad_intent(f"{prefix} but approval cannot be asked on a timed wait")
    named = [intent.approve, intent.reject] + ([intent.always] if intent.always is not None else [])
    if len(set(named)) != len(named):
        raise _bad_intent(f"{prefix} whose approve, reject and always labels are not distinct")
    if sorted(named) != sorted(labels):
        raise _bad_intent(
            f"{prefix} whose approve, reject and always labels {json.dumps(named)} "
            f"do not equal its option labels {json.dumps(labels)}"
        )


def _bad_answer(message: str) -> UserQuestionError:
    return UserQuestionError(message, ErrorCode.BAD_ANSWER)


def check_batch_ids(
    questions: Sequence[Question], items: Sequence[AnswerItem], call_id: str | None
) -> None:
    """L3 / V8: the batch names each question exactly once (no missing, extra or duplicate)."""
    wanted = [q.id for q in questions]
    given = [a.id for a in items]
    if len(given) != len(wanted) or sorted(given) != sorted(wanted):
        n = len(wanted)
        if call_id is None:
            raise _bad_answer(f"the answer batch must name each of its {n} questions exactly once")
        raise _bad_answer(
            f"the answer batch for {call_id} must name each of its {n} questions exactly once"
        )


def parse_answer(result: Any) -> Answer:
    """A client's reply to an ask, schema first: not an Answer at all is BAD_ANSWER.

    V8 (`check_answer`) runs on it afterwards, in the service, against the questions.
    """
    try:
        return Answer.model_validate(result)
    except ValidationError as exc:
        raise _bad_answer(
            f"the client's answer is not an answer batch: {exc.errors()[0]['msg']}"
        ) from exc


def check_answer(
    questions: Sequence[Question], answer: Answer, call_id: str | None = None
) -> Answer:
    """V8: validate an answer against its questions and return it normalized.

    Normalizing means a single-select item with `custom` has `selected` emptied,
    and items come back in question order. An answer that is so already (the common
    case) is returned as it is, not rebuilt.
    """
    items = answer.answers
    check_batch_ids(questions, items, call_id)
    by_id = {a.id: a for a in items}
    out: list[tuple[AnswerItem, list[str]]] = []
    normal = True
    for index, q in enumerate(questions):
        item = by_id[q.id]
        labels = q.option_labels()
        selected = list(item.selected)
        if item.custom is not None:
            if has_lone_surrogate(item.custom):  # S3: text that cannot be stored
                raise _bad_answer(f"question {q.id}: custom {LONE_SURROGATE_MESSAGE}")
            problem = too_long(f"question {q.id}", "custom", item.custom, MAX_CUSTOM)  # S1
            if problem is not None:
                raise _bad_answer(problem)
        if not q.options:
            if selected:
                raise _bad_answer(
                    f"question {q.id} has no options, so its answer may carry only custom text"
                )
        else:
            for label in selected:
                if label not in labels:
                    raise _bad_answer(f"question {q.id} has no option {json.dumps(label)}")
            if not q.is_multi:
                if len(selected) > 1:
                    raise _bad_answer(f"question {q.id} is single-select but has several choices")
                if item.custom is not None:
                    selected = []
        normal = normal and item is items[index] and len(selected) == len(item.selected)
        out.append((item, selected))
    if normal:
        return answer
    return Answer(answers=[AnswerItem(id=i.id, selected=s, custom=i.custom) for i, s in out])
