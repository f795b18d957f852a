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

Size (S7). The server never sends a frame over 8 MiB, the limit it holds its
clients to; a model reply is copied to clients whole (agent text, `tool_call`
arguments, a delegate's result, the ACP door's chunks, `session/load` replay). So
a reply is measured as the wire would carry it (JSON, UTF-8, escapes included:
text plus every call's arguments), and one over `MAX_REPLY_BYTES` ends its turn
with MODEL_ERROR `the model's reply has <n> bytes; at most 8 MiB`, before it is
logged or shown. The limit leaves `ENVELOPE_ROOM` under 8 MiB for the frame
around it (ids, method, field names), so the frame itself stays under 8 MiB.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from askbridge.core import HarnessError, ModelError, ToolInputError, UserQuestionError
from askbridge.core.limits import CheckedQuestions, checked_questions
from askbridge.protocol.text import has_lone_surrogate, scrub

from ..log import events as ev
from .models.base import ModelResponse, ToolCallRequest, reply_too_big
from .tools import ASK_TOOL, parse_questions

MAX_ARGUMENT_DEPTH = 64
MAX_FRAME_BYTES = 8 * 1024 * 1024  # jsonrpc.framing.MAX_BODY: what clients may send us
ENVELOPE_ROOM = 64 * 1024  # the frame around a reply: ids, method, keys, a title
MAX_REPLY_BYTES = MAX_FRAME_BYTES - ENVELOPE_ROOM


@dataclass(frozen=True)
class CheckedCall:
    id: str
    name: str
    arguments: Any
    problem: HarnessError | None = None
    questions: CheckedQuestions | None = None  # parsed ask_user_question batch, S1 checked

    def as_json(self) -> dict[str, Any]:
        return ev.message_tool_call(self.id, self.name, self.arguments)


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
        checked = checked_questions(questions)  # S1: never asked, never written
    except UserQuestionError as exc:
        return CheckedCall(call_id, name, _omitted(exc.message), exc)
    return CheckedCall(call_id, name, arguments, questions=checked)


def checked_calls(calls: Sequence[ToolCallRequest]) -> list[CheckedCall]:
    return [check_call(call) for call in calls]


def checked_reply(response: ModelResponse) -> tuple[str, list[CheckedCall]]:
    """S7, then S3 and S1: the reply's text and calls as they may be logged (ModelError when
    the reply is over size). A reply its model marked `checked` is taken as it is; its ask
    calls are parsed (fresh models, as the arguments are a fresh copy) but not re-checked."""
    if response.checked:
        return response.text, [_passed(call) for call in response.tool_calls]
    check_reply_size(response)
    return clean_text(response.text), checked_calls(response.tool_calls)


def _passed(call: ToolCallRequest) -> CheckedCall:
    if call.name != ASK_TOOL:
        return CheckedCall(call.id, call.name, call.arguments)
    questions = CheckedQuestions(parse_questions(call.arguments))  # S1 passed when built
    return CheckedCall(call.id, call.name, call.arguments, questions=questions)


def passes_checks(response: ModelResponse) -> bool:
    """Whether `checked_reply` leaves `response` as it is, with no problem and every ask
    parsed: a model whose replies never change (a script) marks such a reply `checked`."""
    try:
        text, calls = checked_reply(response)
    except ModelError:
        return False
    return text == response.text and all(
        c.problem is None
        and (c.id, c.name) == (r.id, r.name)
        and c.arguments is r.arguments
        and (c.name != ASK_TOOL or c.questions is not None)
        for c, r in zip(calls, response.tool_calls, strict=True)
    )


def _wire_bytes(value: Any) -> int:
    """How many bytes `value` takes in a frame (the writer's JSON: UTF-8, no ASCII escaping)."""
    try:
        return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())
    except (ValueError, TypeError):
        return 0  # NaN and friends: _arguments_problem omits them, and says why


def check_reply_size(response: ModelResponse) -> None:
    """ModelError when the reply would not fit a frame under 8 MiB (S7, module docstring)."""
    size = _wire_bytes(response.text)
    for call in response.tool_calls:
        size += _wire_bytes(call.id) + _wire_bytes(call.name) + _wire_bytes(call.arguments)
    if size > MAX_REPLY_BYTES:
        raise reply_too_big(size)
