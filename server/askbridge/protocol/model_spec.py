"""ModelSpec (which model a session talks to) and the ask_user_question settings (T1).

ModelSpec is tagged on `kind`:
- `{"kind": "script", "steps": [Step…]}`: a deterministic model; each model
  request consumes the next step, `{"text"?}` or `{"toolCalls": [...], "text"?}`.
- `{"kind": "openai", "model", "baseUrl"?, "apiKeyEnv"?}`: an OpenAI-compatible endpoint.

`AskUserQuestionConfig` is `{mode: "legacy"|"timed", timeout: -1 | 1..2147483}`
(seconds; defaults legacy / 120). Both appear in `session/new`, in LSP
`initializationOptions` and in ACP `_meta.askbridge`. `parse_model_spec_option`
reads the command line's `--model` value (inline JSON or `script:PATH`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, StrictInt, TypeAdapter, WithJsonSchema

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


class ToolCallSpec(NullKeepingModel):
    """One tool call a script step makes; `arguments` is passed to the tool as given."""

    _keep_null = ("arguments",)

    id: NonEmptyStr
    name: NonEmptyStr
    arguments: Any = Field(default_factory=dict)


class Step(WireModel):
    """One scripted model response: `{text?}` or `{toolCalls: [...], text?}`."""

    text: str | None = None
    tool_calls: list[ToolCallSpec] | None = None


class ScriptModelSpec(WireModel):
    kind: Literal["script"] = "script"
    steps: list[Step]


class OpenAIModelSpec(WireModel):
    kind: Literal["openai"] = "openai"
    model: NonEmptyStr
    base_url: str | None = None
    api_key_env: str | None = None


ModelSpec = Annotated[ScriptModelSpec | OpenAIModelSpec, Field(discriminator="kind")]
MODEL_SPEC_ADAPTER: TypeAdapter[ScriptModelSpec | OpenAIModelSpec] = TypeAdapter(ModelSpec)
_STEPS_ADAPTER: TypeAdapter[list[Step]] = TypeAdapter(list[Step])


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
            return ScriptModelSpec(steps=_STEPS_ADAPTER.validate_python(data))
        return parse_model_spec(data)
    return parse_model_spec(_load_json(value, "--model"))


def _load_json(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{what} is not valid JSON: {exc}") from exc
