"""What a model returned, made safe to log before anything else happens (S1, S3).

A model (an endpoint, a script) may return anything: text with lone
surrogates, tool arguments with `NaN` or nested a thousand deep, an
`ask_user_question` with a 7 MB label. The store refuses what it cannot
encode, and a question over the S1 limits must be neither asked nor written.
So before the step is logged:

- text, call ids and names keep their content with U+FFFD for lone surrogates;
- arguments holding `NaN`/`Infinity` or nested deeper than 64 are replaced by
  `{"omitted": <why>}` and the call fails with BAD_TOOL_INPUT, which the model
  sees and can fix;
- `ask_user_question` arguments are parsed once here (T2); a batch breaking
  S1 is logged as `{"omitted": <why>}` and fails with BAD_QUESTION; a parse
  failure (T4) is left for the tool to report with the arguments as sent.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from askbridge.core import HarnessError, ToolInputError, UserQuestionError
from askbridge.core.limits import check_question_limits
from askbridge.protocol.text import has_lone_surrogate, scrub
from askbridge.protocol.vocabulary import QuestionItem

from .models.base import ToolCallRequest
from .tools import ASK_TOOL, parse_questions

MAX_ARGUMENT_DEPTH = 64


@dataclass(frozen=True)
class CheckedCall:
    id: str
    name: str
    arguments: Any
    problem: HarnessError | None = None
    questions: list[QuestionItem] | None = None  # parsed ask_user_question batch

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "arguments": self.arguments}


def clean_text(text: str) -> str:
    cleaned: str = scrub(text)
    return cleaned


def _arguments_problem(value: Any) -> tuple[str | None, bool]:
    """Why `value` cannot be stored as JSON (NaN, Infinity, too deep), or None; and whether
    a string in it holds a lone surrogate (to scrub). One walk for both."""
    surrogates = False
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        kind = type(item)
        if kind is str:
            if not surrogates and not item.isascii():
                surrogates = has_lone_surrogate(item)
        elif kind is dict or kind is list or isinstance(item, dict | list):
            if depth > MAX_ARGUMENT_DEPTH:
                return f"tool arguments are nested deeper than {MAX_ARGUMENT_DEPTH} levels", False
            if isinstance(item, dict):
                for key, child in item.items():
                    if not surrogates and isinstance(key, str) and not key.isascii():
                        surrogates = has_lone_surrogate(key)
                    stack.append((child, depth + 1))
            else:
                stack.extend((child, depth + 1) for child in item)
        elif isinstance(item, float) and not math.isfinite(item):
            return f"tool arguments hold {item}, which is not JSON", False
    return None, surrogates


def _omitted(why: str) -> dict[str, str]:
    return {"omitted": why}


def check_call(call: ToolCallRequest) -> CheckedCall:
    call_id, name = clean_text(call.id), clean_text(call.name)
    why, surrogates = _arguments_problem(call.arguments)
    if why is not None:
        return CheckedCall(call_id, name, _omitted(why), ToolInputError(why))
    arguments = scrub(call.arguments) if surrogates else call.arguments
    if name != ASK_TOOL:
        return CheckedCall(call_id, name, arguments)
    try:
        questions = parse_questions(arguments)
    except ToolInputError:
        return CheckedCall(call_id, name, arguments)  # T4: the tool says what is wrong
    try:
        check_question_limits(questions)  # S1: never asked, never written
    except UserQuestionError as exc:
        return CheckedCall(call_id, name, _omitted(exc.message), exc)
    return CheckedCall(call_id, name, arguments, questions=questions)


def checked_calls(calls: Sequence[ToolCallRequest]) -> list[CheckedCall]:
    return [check_call(call) for call in calls]
