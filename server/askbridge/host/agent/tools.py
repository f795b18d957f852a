"""The `ask_user_question` tool (behavior.md T1–T7).

The tool validates the model's arguments (T2, T4), calls the core's `ask`
(legacy, T3) or `ask_timed` (timed, T4) and returns a typed `ToolOutcome`
(outcome.py): answered (with the checked batch), pending, or failed with
`{name, code}`; the text the model receives — compact JSON of the answer, the
pending notice (T5), or `Error: <message>` (T6) — is rendered there once and
logged beside the outcome's kind, so that no reader parses it back. `start` asks
as a record resumed by a callback (the turn loop's way); `run` awaits the same.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol

from askbridge.core import (
    AbortSignal,
    HarnessError,
    Question,
    ToolInputError,
    UserQuestionRequest,
    UserQuestionService,
)
from askbridge.core.waterfall import await_callback
from askbridge.protocol.defaults import (
    ASK_TIMEOUT_DEFAULT_SECONDS,
    ASK_TIMEOUT_MAX_SECONDS,
    ASK_TIMEOUT_MESSAGE,
)
from askbridge.protocol.vocabulary import Wait

from ..log import events as ev
from ..log.projection_parse import questions_valid, read_questions
from ..store.store_api import encode_event
from .agents import Agent
from .ask_call import TOOL_CALL_ID, CallExtra
from .outcome import OutcomeKind, Resume, ToolOutcome, compact

ASK_TOOL = "ask_user_question"
DELEGATE_TOOL = "delegate"


@dataclass(slots=True)
class ToolContext:
    agent: Agent
    session_id: str
    call_id: str
    signal: AbortSignal


ToolRunner = Callable[[ToolContext, Any], Awaitable[ToolOutcome]]


def valid_timeout(value: object) -> bool:
    return (
        isinstance(value, int)
        and not isinstance(value, bool)
        and (value == -1 or 1 <= value <= ASK_TIMEOUT_MAX_SECONDS)
    )


_QUESTION_PROPS: dict[str, Any] = {
    "id": {"type": "string", "description": "Caller-chosen id, echoed in the answer."},
    "question": {"type": "string", "description": "The question to ask."},
    "header": {"type": "string", "description": "A short label shown above the question."},
    "options": {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {"label": {"type": "string"}, "description": {"type": "string"}},
            "required": ["label"],
        },
    },
    "multi_select": {"type": "boolean", "description": "Allow several options."},
}


class AskUserQuestionTool:
    """T1: configured once per session with `mode` and a default `timeout` in seconds."""

    name = ASK_TOOL

    def __init__(
        self,
        service: UserQuestionService,
        mode: Literal["legacy", "timed"] = "legacy",
        timeout: int = ASK_TIMEOUT_DEFAULT_SECONDS,
    ) -> None:
        if mode not in ("legacy", "timed"):
            raise ValueError(f"ask_user_question mode must be legacy or timed, not {mode!r}")
        if not valid_timeout(timeout):
            raise ValueError(ASK_TIMEOUT_MESSAGE)
        self.service, self.mode, self.timeout = service, mode, timeout

    def schema(self) -> dict[str, Any]:
        """T2: the one definition the model sees (legacy or timed)."""
        properties: dict[str, Any] = {
            "questions": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "properties": _QUESTION_PROPS,
                    "required": ["id", "question"],
                },
            }
        }
        description = (
            "Ask the user one or more structured questions and wait for the answer. "
            "Each answer names the question id and the selected option labels, "
            "or custom text."
        )
        if self.mode == "timed":
            default = "no timeout" if self.timeout == -1 else f"{self.timeout} seconds"
            properties["timeout"] = {
                "type": "integer",
                "description": f"Seconds to wait (-1: no timeout). Default: {default}.",
            }
            description += (
                f" The wait defaults to {default}. If no answer arrives in time the result is "
                '{"pending": true}: the question stays open and the reply arrives later as a '
                "user message; pending is never an answer, a refusal or permission."
            )
        return {
            "name": ASK_TOOL,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": ["questions"]},
        }

    async def run(
        self, ctx: ToolContext, arguments: Any, questions: Sequence[Question] | None = None
    ) -> ToolOutcome:
        """`start` awaited (the MCP door's calls); `questions` is the batch already parsed from
        `arguments` (model_output.py). Cancelling the await withdraws the question."""

        def begin(
            settle: Callable[[ToolOutcome | None, Exception | None], None],
        ) -> Callable[[], None]:
            return self.start(ctx, arguments, questions, lambda _, o: settle(o, None)).cancel

        outcome: ToolOutcome = await await_callback(begin)
        return outcome

    def start(
        self,
        ctx: ToolContext,
        arguments: Any,
        questions: Sequence[Question] | None,
        done: Callable[[str, ToolOutcome], None],
    ) -> Cancellable:
        """`run` as a record (architecture: "A pending question is a record"): `done(call id,
        outcome)` is called once, maybe before this returns; the result's `cancel()` ends it
        quietly (its asker is gone)."""
        call_id = ctx.call_id
        try:
            request, timeout_ms = self._request(ctx, arguments, questions)
            settle = Resume(call_id, done)
            if timeout_ms is None:
                pending = self.service.start_ask(request, settle)
            else:
                pending = self.service.start_ask_timed(request, call_id, timeout_ms, settle)
        except HarnessError as exc:
            done(call_id, ToolOutcome.failure(exc))
            return ENDED
        return pending

    def _request(
        self, ctx: ToolContext, arguments: Any, questions: Sequence[Question] | None
    ) -> tuple[UserQuestionRequest, int | None]:
        """T2–T4: the core's request and, for a timed wait, its timeout in ms."""
        if questions is None:
            questions = parse_questions(arguments)
        request = _request(ctx, questions)
        if self.mode == "legacy":
            return request, None
        seen: set[str] = set()
        for q in questions:  # T4, before any answerer runs
            if q.id in seen:
                raise ToolInputError(
                    f"question id {json.dumps(q.id)} must be unique within this call"
                )
            seen.add(q.id)
        timeout = (
            arguments.get("timeout", self.timeout) if isinstance(arguments, dict) else self.timeout
        )
        if not valid_timeout(timeout):
            raise ToolInputError(ASK_TIMEOUT_MESSAGE)
        if ctx.agent is None:
            raise ToolInputError("timed questions require a live agent")
        if timeout == -1:
            return request.with_wait(ctx.signal, Wait(call_id=ctx.call_id)), None
        return request, timeout * 1000


class Cancellable(Protocol):
    """What a started call is while it waits (the core's PendingAsk): it can be cancelled."""

    def cancel(self) -> None: ...


class _Ended:
    """A call that ended before it was asked: nothing to cancel."""

    __slots__ = ()

    def cancel(self) -> None:
        pass


ENDED: Final = _Ended()


def parse_questions(arguments: Any) -> list[Question]:
    """T2: read `questions` from the model's arguments; other keys are dropped.

    The one reader of the arguments is the projection's (`read_questions`, P2), which
    also names what T4 refuses; the core's plain records (core/question.py: no pydantic
    model per waiting question) are built from its checked wire form, sharing its strings.
    A batch that reader takes whole (`questions_valid`, the usual case) becomes records
    straight from the arguments (`Question.from_tool_item`: the same records, without the
    view form in between).
    """
    raw = arguments.get("questions") if isinstance(arguments, dict) else None
    if type(raw) is list and questions_valid(raw):  # the usual case: taken whole, as it is
        return [Question.from_tool_item(item) for item in raw]
    questions, problem = read_questions(arguments)
    if problem is not None:
        raise ToolInputError(problem)
    return [Question.from_wire(q) for q in questions or ()]


DELEGATE_SCHEMA: dict[str, Any] = {
    "name": DELEGATE_TOOL,
    "description": (
        "Run a one-shot child agent on a task and return its final text. The child cannot "
        "ask the user questions: it must put open decisions in its final result."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "prompt": {"type": "string", "description": "The child's task."},
            "steps": {"type": "array", "description": "Script steps when the model is a script."},
        },
        "required": ["prompt"],
    },
}


class StepTools:
    """What the model sees every step of a session: its tools (fixed per session) and the
    `request/header` that declares them, one event (read-only) encoded once."""

    __slots__ = ("encoded", "header", "schemas")

    def __init__(self, ask_tool: AskUserQuestionTool) -> None:
        self.schemas = [ask_tool.schema(), DELEGATE_SCHEMA]
        self.header = ev.request_header(self.schemas)
        self.encoded = encode_event(self.header)


def reply_text(call_id: str, questions: list[dict[str, Any]], answers: list[dict[str, Any]]) -> str:
    """L4: the compact JSON a late reply becomes, keys in this order."""
    body = {
        "kind": "answer_to_pending_question",
        "tool": ASK_TOOL,
        "callId": call_id,
        "questions": questions,
        "answers": answers,
    }
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False)


__all__ = [
    "ASK_TOOL",
    "DELEGATE_SCHEMA",
    "DELEGATE_TOOL",
    "TOOL_CALL_ID",
    "AskUserQuestionTool",
    "OutcomeKind",
    "StepTools",
    "ToolContext",
    "ToolOutcome",
    "compact",
    "parse_questions",
    "reply_text",
    "valid_timeout",
]


def _request(ctx: ToolContext, questions: Sequence[Question]) -> UserQuestionRequest:
    """The core's request for one tool call, legacy or timed alike."""
    return UserQuestionRequest(
        questions,
        agent=ctx.agent,
        signal=ctx.signal,
        session_id=ctx.session_id,
        extra=CallExtra(ctx.call_id),  # {TOOL_CALL_ID: call id}
    )
