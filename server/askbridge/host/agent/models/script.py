"""The `script` model: a fixed list of responses, for tests, demos and harnesses.

ModelSpec (protocol.md): `{"kind": "script", "steps": [Step…]}` where a step
is `{"text": "…"}` or `{"toolCalls": [{"id", "name", "arguments"}], "text"?}`.
Request number `request_index` (counted by the caller from the session's
`request/header` events) answers with step `request_index`; past the end the
model answers with empty text and no tool calls, which ends the turn. Because
the position comes from the log and not from this object, a session reloaded
after a restart takes the next unused step.

Steps are checked once, when the model is built, so a malformed script fails
session creation (ValueError) rather than a turn halfway through. Steps may be
plain dicts in the JSON form (camelCase `toolCalls`) or pydantic models, which
are dumped to that form. Unknown keys (a typo such as `multiSelect` in tool
arguments) are refused earlier, where a spec enters: every client's and the
command line's ModelSpec is parsed by `protocol.model_spec.ScriptModelSpec`,
which names them. Here they are ignored, so that a session stored before that
check existed still loads.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from ..model_output import passes_checks
from .base import History, ModelResponse, ToolCallRequest, Tools


def decode_tool_arguments(arguments: Any) -> Any:
    """Tool-call arguments as the tools want them: a JSON object string becomes a dict.

    A string that is not a JSON object is kept as it is, so the tool reports
    the bad input to the model instead of the adapter failing the turn.
    """
    if not isinstance(arguments, str):
        return arguments
    try:
        decoded = json.loads(arguments)
    except (ValueError, RecursionError):  # the tool reports it; nothing here may fail (S3)
        return arguments
    return decoded if isinstance(decoded, dict) else arguments


def _as_wire_dict(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    return value


def _parse_tool_call(raw: Any, where: str) -> ToolCallRequest:
    raw = _as_wire_dict(raw)
    if not isinstance(raw, Mapping):
        raise ValueError(f"{where} must be an object with id, name and arguments")
    call_id = raw.get("id")
    name = raw.get("name")
    if not isinstance(call_id, str) or not call_id:
        raise ValueError(f"{where}.id must be a non-empty string")
    if not isinstance(name, str) or not name:
        raise ValueError(f"{where}.name must be a non-empty string")
    return ToolCallRequest(
        id=call_id, name=name, arguments=decode_tool_arguments(raw.get("arguments", {}))
    )


def parse_step(raw: Any, index: int) -> ModelResponse:
    """One script step as the response it produces; ValueError names the bad part."""
    where = f"script step {index}"
    raw = _as_wire_dict(raw)
    if not isinstance(raw, Mapping):
        raise ValueError(f"{where} must be an object with text and/or toolCalls")
    text = raw.get("text")
    if text is None:
        text = ""
    if not isinstance(text, str):
        raise ValueError(f"{where}.text must be a string")
    raw_calls = raw.get("toolCalls")
    if raw_calls is None:
        raw_calls = []
    if not isinstance(raw_calls, Sequence) or isinstance(raw_calls, str):
        raise ValueError(f"{where}.toolCalls must be a list")
    calls = [_parse_tool_call(call, f"{where}.toolCalls[{i}]") for i, call in enumerate(raw_calls)]
    return ModelResponse(text=text, tool_calls=calls)


class ScriptModel:
    """Answers request N with step N of a fixed script (see the module docstring)."""

    # `complete` returns without waiting for anything: the turn loop need not make it
    # interruptible (host/agent/turns.py).
    never_waits = True
    # Its position is `request_index`: the turn loop need not read the log for it.
    reads_history = False

    def __init__(self, steps: Sequence[Any]) -> None:
        if not isinstance(steps, Sequence) or isinstance(steps, str):
            raise ValueError("script model steps must be a list")
        self._steps = [parse_step(step, i) for i, step in enumerate(steps)]
        # S3, S1 and S7 once per step, here: a step that passes them unchanged is answered
        # as `checked`, and the turn loop does not walk it on every request.
        self._checked = [passes_checks(step) for step in self._steps]
        # Arguments kept as JSON text: each answer decodes a fresh copy (the caller may
        # change what it got without changing what a reload would replay), and
        # json.loads is several times cheaper than copy.deepcopy on the hot path.
        self._arguments = [
            [(c.id, c.name, json.dumps(c.arguments)) for c in step.tool_calls]
            for step in self._steps
        ]

    @property
    def step_count(self) -> int:
        return len(self._steps)

    async def complete(self, history: History, tools: Tools, request_index: int) -> ModelResponse:
        if request_index < 0:
            raise ValueError(f"request_index must be >= 0, got {request_index}")
        if request_index >= len(self._steps):
            return ModelResponse()
        calls = [
            ToolCallRequest(id=call_id, name=name, arguments=json.loads(arguments))
            for call_id, name, arguments in self._arguments[request_index]
        ]
        return ModelResponse(
            self._steps[request_index].text, calls, checked=self._checked[request_index]
        )
