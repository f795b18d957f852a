"""The model-facing `ask_user_question` arguments (T2) and the key check of script specs.

`AskUserQuestionArguments` is what the model writes when it calls the tool:
snake_case keys (`multi_select`), `questions` of `{id, question, header?,
options?: [{label, description?}], multi_select?}` and, in the timed schema, a
`timeout` in seconds (`AskTimeoutSeconds`: -1 or 1..2147483). It is documented
in protocol/README.md and written to protocol/schema by `make schema`; the
host's tool (host/agent/tools.py) shows the model the same fields (a test checks).

`unknown_script_keys` walks a script spec (protocol.md "ModelSpec") and names
every key a script does not know — in the spec, a step, a tool call, the
arguments of an `ask_user_question` or `delegate` call, nested delegate steps
included — with its path and a did-you-mean (`steps[2].toolCalls[0].arguments.
questions[0]: unknown key 'multiSelect' (did you mean 'multi_select'?)`). A typo
in a script would otherwise change the question silently. Only keys
are checked: wrong values stay the tool's to report, so scripts can test T4. A
model from a real endpoint keeps T2: the tool ignores keys it does not know.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictInt, WithJsonSchema
from pydantic.json_schema import SkipJsonSchema

from .defaults import ASK_TIMEOUT_DEFAULT_SECONDS, ASK_TIMEOUT_MAX_SECONDS, ASK_TIMEOUT_MESSAGE

__all__ = ["ASK_TIMEOUT_DEFAULT_SECONDS", "ASK_TIMEOUT_MAX_SECONDS", "ASK_TIMEOUT_MESSAGE"]


def _check_timeout_seconds(value: int) -> int:
    if value == -1 or 1 <= value <= ASK_TIMEOUT_MAX_SECONDS:
        return value
    raise ValueError(ASK_TIMEOUT_MESSAGE)


# StrictInt: `true`, `"30"` and `30.0` are wrong types here, not timeouts.
AskTimeoutSeconds = Annotated[
    StrictInt,
    AfterValidator(_check_timeout_seconds),
    WithJsonSchema(
        {
            "type": "integer",
            "anyOf": [{"const": -1}, {"minimum": 1, "maximum": ASK_TIMEOUT_MAX_SECONDS}],
            "description": "seconds; -1 waits indefinitely",
        }
    ),
]


class ToolOptionArgument(BaseModel):
    """An option as the model writes it in `ask_user_question` (T2)."""

    model_config = ConfigDict(extra="forbid")

    label: str
    description: str | SkipJsonSchema[None] = None


class ToolQuestionArgument(BaseModel):
    """A question as the model writes it in `ask_user_question` (T2): snake_case `multi_select`."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(description="Caller-chosen id, echoed in the answer.")
    question: str = Field(description="The question to ask.")
    header: str | SkipJsonSchema[None] = Field(
        None, description="A short label shown above the question."
    )
    options: list[ToolOptionArgument] | SkipJsonSchema[None] = None
    multi_select: bool | SkipJsonSchema[None] = Field(None, description="Allow several options.")


class AskUserQuestionArguments(BaseModel):
    """The arguments of the model-facing `ask_user_question` tool (T2, T4).

    Keys are snake_case, as the model writes them. `timeout` (seconds, -1 waits
    indefinitely) is part of the timed schema only; the legacy tool ignores it.
    The tool ignores keys a model adds (T2); a script model rejects them.
    """

    model_config = ConfigDict(extra="forbid", title="ask_user_question arguments")

    questions: list[ToolQuestionArgument] = Field(min_length=1)
    timeout: AskTimeoutSeconds | SkipJsonSchema[None] = None


_SPEC_KEYS = frozenset({"kind", "steps"})
_STEP_KEYS = frozenset({"text", "toolCalls", "tool_calls"})
_CALL_KEYS = frozenset({"id", "name", "arguments"})
_ASK_KEYS = frozenset(AskUserQuestionArguments.model_fields)
_QUESTION_KEYS = frozenset(ToolQuestionArgument.model_fields)
_OPTION_KEYS = frozenset(ToolOptionArgument.model_fields)
_DELEGATE_KEYS = frozenset({"prompt", "steps"})  # host/agent/tools.py DELEGATE_SCHEMA


def _folded(key: str) -> str:
    return key.replace("_", "").lower()


def _unknown(node: Any, known: frozenset[str], where: str) -> list[str]:
    if not isinstance(node, dict):
        return []
    shown = sorted(k for k in known if k != "tool_calls")  # an alias, not worth advertising
    problems = []
    for key in node:
        if key in known:
            continue
        near = [k for k in shown if _folded(k) == _folded(str(key))]
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        problems.append(f"{where}: unknown key {key!r}{hint}; expected {', '.join(shown)}")
    return problems


def _list_items(node: Any, key: str) -> list[tuple[int, Any]]:
    value = node.get(key) if isinstance(node, dict) else None
    return list(enumerate(value)) if isinstance(value, list) else []


def unknown_script_keys(spec: Any, where: str = "") -> list[str]:
    """Every unknown key of a script spec (or a bare step list), each with its path."""
    if isinstance(spec, list):
        steps: list[tuple[int, Any]] = list(enumerate(spec))
        problems: list[str] = []
    else:
        problems = _unknown(spec, _SPEC_KEYS, where or "script model spec")
        steps = _list_items(spec, "steps")
    for i, step in steps:
        at = f"{where}steps[{i}]"
        problems += _unknown(step, _STEP_KEYS, at)
        calls = _list_items(step, "toolCalls") or _list_items(step, "tool_calls")
        for j, call in calls:
            problems += _call_keys(call, f"{at}.toolCalls[{j}]")
    return problems


def _call_keys(call: Any, at: str) -> list[str]:
    problems = _unknown(call, _CALL_KEYS, at)
    if not isinstance(call, dict):
        return problems
    args, at = call.get("arguments"), f"{at}.arguments"
    if call.get("name") == "ask_user_question":
        problems += _unknown(args, _ASK_KEYS, at)
        for k, question in _list_items(args, "questions"):
            problems += _unknown(question, _QUESTION_KEYS, f"{at}.questions[{k}]")
            for n, option in _list_items(question, "options"):
                problems += _unknown(option, _OPTION_KEYS, f"{at}.questions[{k}].options[{n}]")
    elif call.get("name") == "delegate":
        problems += _unknown(args, _DELEGATE_KEYS, at)
        if isinstance(args, dict) and isinstance(args.get("steps"), list):
            problems += unknown_script_keys(args["steps"], f"{at}.")
    return problems
