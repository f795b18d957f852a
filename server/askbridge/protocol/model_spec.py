"""ModelSpec (which model a session talks to) and the ask_user_question settings (T1).

ModelSpec is tagged on `kind`:
- `{"kind": "script", "steps": [Step…]}`: a deterministic model; each model
  request consumes the next step, `{"text"?}` or `{"toolCalls": [...], "text"?}`.
- `{"kind": "openai", "model", "baseUrl"?, "apiKeyEnv"?}`: an OpenAI-compatible endpoint.

`AskUserQuestionConfig` is `{mode: "legacy"|"timed", timeout: -1 | 1..2147483}`
(seconds; defaults legacy / 120). Both appear in `session/new`, in LSP
`initializationOptions` and in ACP `_meta.askbridge`. `parse_model_spec_option`
reads the command line's `--model` value (inline JSON or `script:PATH`);
`describe_model_spec_error` turns its failures into one line for the command line.

Script specs are strict where wire payloads are lenient (issue 13): a key a
script does not know — in the spec, a step, a tool call, or the arguments of an
`ask_user_question` or `delegate` call, nested delegate steps included — is
rejected with its path named (`steps[2].toolCalls[0].arguments.questions[0]:
unknown key 'multiSelect' (did you mean 'multi_select'?)`), because a typo in a
script would otherwise change the question silently. Only keys are checked:
wrong values stay the tool's to report, so scripts can test T4. A model from a
real endpoint keeps T2 (the tool ignores keys it does not know).
`AskUserQuestionArguments` is the model-facing tool schema (T2, snake_case as
the model writes it); its field names are the keys a script may use.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    TypeAdapter,
    ValidationError,
    WithJsonSchema,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema

from .base import WireModel
from .common import NullKeepingModel

NonEmptyStr = Annotated[str, Field(min_length=1)]

ASK_TIMEOUT_MAX_SECONDS = 2147483
ASK_TIMEOUT_DEFAULT_SECONDS = 120
# The T4 sentence, reused for configured timeouts so every door says the same thing.
ASK_TIMEOUT_MESSAGE = "timeout must be -1 or a positive integer up to 2147483 seconds"


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
AskMode = Literal["legacy", "timed"]


class AskUserQuestionConfig(WireModel):
    """T1: which ask_user_question schema the model sees, and its default timeout in seconds."""

    mode: AskMode = "legacy"
    timeout: AskTimeoutSeconds = ASK_TIMEOUT_DEFAULT_SECONDS

    def merged_over(self, base: AskUserQuestionConfig) -> AskUserQuestionConfig:
        """This config with every field the sender left out taken from `base`.

        `{"timeout": 30}` in session/new keeps the server's `--ask-mode`, which
        the defaults alone could not tell apart from an explicit "legacy".
        """
        given = self.model_fields_set
        return AskUserQuestionConfig(
            mode=self.mode if "mode" in given else base.mode,
            timeout=self.timeout if "timeout" in given else base.timeout,
        )


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


# Script models reject unknown keys (the module docstring says why); so does their schema.
_STRICT = ConfigDict(extra="forbid")


class ToolCallSpec(NullKeepingModel):
    """One tool call a script step makes; `arguments` is passed to the tool as given."""

    model_config = _STRICT
    _keep_null = ("arguments",)

    id: NonEmptyStr
    name: NonEmptyStr
    arguments: Any = Field(
        default_factory=dict,
        description="Passed to the tool as given. For ask_user_question: "
        "tool.ask_user_question.arguments.json (unknown keys are rejected, values are not "
        "checked here); for delegate: {prompt, steps?}.",
    )


class Step(WireModel):
    """One scripted model response: `{text?}` or `{toolCalls: [...], text?}`."""

    model_config = _STRICT
    text: str | None = None
    tool_calls: list[ToolCallSpec] | None = None


class ScriptModelSpec(WireModel):
    model_config = _STRICT
    kind: Literal["script"] = "script"
    steps: list[Step]

    @model_validator(mode="before")
    @classmethod
    def _no_unknown_keys(cls, data: Any) -> Any:
        problems = unknown_script_keys(data)
        if problems:
            raise ValueError("; ".join(problems))
        return data


# -- unknown keys in scripts ------------------------------------------------------------------

_SPEC_KEYS = frozenset({"kind", "steps"})
_STEP_KEYS = frozenset({"text", "toolCalls", "tool_calls"})
_CALL_KEYS = frozenset({"id", "name", "arguments"})
_ASK_KEYS = frozenset(AskUserQuestionArguments.model_fields)
_QUESTION_KEYS = frozenset(ToolQuestionArgument.model_fields)
_OPTION_KEYS = frozenset(ToolOptionArgument.model_fields)
_DELEGATE_KEYS = frozenset({"prompt", "steps"})  # host/tools.py DELEGATE_SCHEMA


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


class OpenAIModelSpec(WireModel):
    kind: Literal["openai"] = "openai"
    model: NonEmptyStr
    base_url: str | None = None
    api_key_env: str | None = None


ModelSpec = Annotated[ScriptModelSpec | OpenAIModelSpec, Field(discriminator="kind")]
MODEL_SPEC_ADAPTER: TypeAdapter[ScriptModelSpec | OpenAIModelSpec] = TypeAdapter(ModelSpec)


def parse_model_spec(data: Any) -> ScriptModelSpec | OpenAIModelSpec:
    """A ModelSpec from parsed JSON; pydantic.ValidationError when it is not one."""
    return MODEL_SPEC_ADAPTER.validate_python(data)


def parse_model_spec_option(value: str) -> ScriptModelSpec | OpenAIModelSpec:
    """The `--model` option: inline ModelSpec JSON, or `script:PATH` naming a JSON file
    that holds a ModelSpec or a bare list of steps.

    Raises ValueError with a one-line reason (the CLI turns it into a usage error),
    or pydantic.ValidationError when the JSON is not a valid ModelSpec.
    """
    if value.startswith("script:"):
        path = Path(value.removeprefix("script:"))
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ValueError(f"cannot read model script {str(path)!r}: {exc.strerror}") from exc
        data = _load_json(text, f"model script {str(path)!r}")
        if isinstance(data, list):
            return ScriptModelSpec.model_validate({"kind": "script", "steps": data})
        return parse_model_spec(data)
    return parse_model_spec(_load_json(value, "--model"))


def _load_json(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{what} is not valid JSON: {exc}") from exc


MODEL_SPEC_FORMS = (
    """'{"kind": "openai", "model": NAME}' (optional "baseUrl", "apiKeyEnv"), """
    """'{"kind": "script", "steps": [...]}', or script:PATH (a JSON file holding either, """
    "or a list of steps)"
)


def describe_model_spec_error(exc: ValueError) -> str:
    """One line for a `--model` that is not a ModelSpec: the first problem, then the forms.

    `exc` is what `parse_model_spec_option` raised (a pydantic ValidationError is a
    ValueError); a pydantic dump would bury the point under URLs and input echoes.
    """
    forms = f"; accepted: {MODEL_SPEC_FORMS}"
    if not isinstance(exc, ValidationError):
        return f"{exc}{forms}"  # not JSON, or no such file
    errors = exc.errors(include_url=False)
    kind, loc, msg = errors[0]["type"], errors[0]["loc"], errors[0]["msg"]
    if kind == "union_tag_invalid":
        what = f"unknown model kind {errors[0].get('ctx', {}).get('tag')!r}"
    elif kind == "union_tag_not_found":
        what = "the spec has no kind"
    elif kind in ("model_attributes_type", "model_type"):
        what = "the spec must be a JSON object"
    elif kind == "value_error":  # our own sentences (unknown script keys) name their path
        what, forms = msg.removeprefix("Value error, "), ""
    else:
        path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc[1:])
        what, forms = f"{path.lstrip('.')}: {msg}", forms if kind == "missing" else ""
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{what}{more}{forms}"
