"""Size limits on questions and answers (behavior.md S1), checked before anything is asked.

A question batch larger than these is BAD_QUESTION with the sentence
`question <id>: <field> has <n> characters; at most <max>` (for a model: a
tool error it can fix; for a client: -32602 where it is a request); an answer's
`custom` over its limit is BAD_ANSWER. The numbers are the contract: the
editors render what fits in them, and the wire stays far below the 8 MiB
frame cap (S7) even for the largest batch.

S1 is checked once per question: `checked_questions` returns the batch as
`CheckedQuestions`, which the service takes as checked (the turn loop checks a
model's call before logging it, host/agent/model_output.py); any other batch
the service checks itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from askbridge.protocol.errors import ErrorCode

from .errors import UserQuestionError
from .question import Question

MAX_QUESTIONS: Final = 20
MAX_ID: Final = 64
MAX_HEADER: Final = 100
MAX_QUESTION: Final = 2_000
MAX_DETAIL: Final = 65_536
MAX_OPTIONS: Final = 50
MAX_LABEL: Final = 200
MAX_DESCRIPTION: Final = 1_000
MAX_CUSTOM: Final = 65_536


def _bad(message: str) -> UserQuestionError:
    return UserQuestionError(message, ErrorCode.BAD_QUESTION)


def too_long(where: str, field: str, value: str | None, limit: int) -> str | None:
    """The S1 sentence when `value` is longer than `limit` characters, else None."""
    if value is None or len(value) <= limit:
        return None
    return f"{where}: {field} has {len(value)} characters; at most {limit}"


def question_problem(q: Question) -> str | None:
    """The first S1 limit `q` breaks, as its sentence; None when it fits."""
    where = f"question {q.id[:MAX_ID]}"
    for field, value, limit in (
        ("id", q.id, MAX_ID),
        ("header", q.header, MAX_HEADER),
        ("question", q.question, MAX_QUESTION),
        ("detail", q.detail, MAX_DETAIL),
    ):
        problem = too_long(where, field, value, limit)
        if problem is not None:
            return problem
    options = q.options or ()
    if len(options) > MAX_OPTIONS:
        return f"{where}: options has {len(options)} entries; at most {MAX_OPTIONS}"
    for index, option in enumerate(options):
        problem = too_long(where, f"options.{index}.label", option.label, MAX_LABEL) or too_long(
            where, f"options.{index}.description", option.description, MAX_DESCRIPTION
        )
        if problem is not None:
            return problem
    return None


def check_question_limits(questions: Sequence[Question]) -> None:
    """S1: BAD_QUESTION for the first limit the batch breaks."""
    if len(questions) > MAX_QUESTIONS:
        raise _bad(f"ask_user_question has {len(questions)} questions; at most {MAX_QUESTIONS}")
    for q in questions:
        problem = question_problem(q)
        if problem is not None:
            raise _bad(problem)


class CheckedQuestions(tuple[Question, ...]):
    """A batch `checked_questions` found within S1 (immutable, so it stays so)."""

    __slots__ = ()


def checked_questions(questions: Sequence[Question]) -> CheckedQuestions:
    """S1 once: BAD_QUESTION for the first limit broken, else the batch marked checked."""
    if type(questions) is CheckedQuestions:
        return questions
    check_question_limits(questions)
    return CheckedQuestions(questions)
