"""ModelSpec (which model a session talks to) and the ask_user_question settings (T1).

ModelSpec is tagged on `kind`:
- `{"kind": "script", "steps": [Step…]}`: a deterministic model; each model
  request consumes the next step, `{"text"?}` or `{"toolCalls": [...], "text"?}`.
- `{"kind": "openai", "model", "baseUrl"?, "apiKeyEnv"?, "timeoutS"?}`: an OpenAI-compatible
  endpoint; `baseUrl` must be http:// or https:// (S11) without user information, and
  `apiKeyEnv` must end in `_KEY` or `_TOKEN` (S18: credentials come from the environment,
  and only a variable named as a key is sent); `timeoutS` is the whole request's deadline.

`AskUserQuestionConfig` is `{mode: "legacy"|"timed", timeout: -1 | 1..2147483}`
(seconds; defaults legacy / 120). Both appear in `session/new`, in LSP
`initializationOptions` and in ACP `_meta.askbridge`. `parse_model_spec_option`
reads the command line's `--model` value (inline JSON or `script:PATH`);
`describe_model_spec_error` turns its failures into one line for the command line.

Script specs are strict where wire payloads are lenient:
`ScriptModelSpec` refuses keys a script does not know, each named with its path
(`tool_arguments.unknown_script_keys`); `OpenAIModelSpec` refuses its unknown keys
the same way, naming the accepted ones (S11).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import (
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)

from .base import WireModel
from .common import NullKeepingModel
from .tool_arguments import (
    ASK_TIMEOUT_DEFAULT_SECONDS,
    ASK_TIMEOUT_MAX_SECONDS,
    ASK_TIMEOUT_MESSAGE,
    AskTimeoutSeconds,
    AskUserQuestionArguments,
    unknown_script_keys,
)

__all__ = [  # the timeout and tool-argument names are re-exported: callers import them here
    "ASK_TIMEOUT_DEFAULT_SECONDS",
    "ASK_TIMEOUT_MAX_SECONDS",
    "ASK_TIMEOUT_MESSAGE",
    "MODEL_SPEC_ADAPTER",
    "AskTimeoutSeconds",
    "AskUserQuestionArguments",
    "AskUserQuestionConfig",
    "ModelSpec",
    "OpenAIModelSpec",
    "ScriptModelSpec",
    "Step",
    "ToolCallSpec",
    "completions_url",
    "describe_model_spec_error",
    "has_user_info",
    "is_key_variable",
    "parse_model_spec",
    "parse_model_spec_option",
    "shown_url",
    "unknown_script_keys",
]

NonEmptyStr = Annotated[str, Field(min_length=1)]

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


# S11: an openai spec is as strict as a script one: a misspelt `apikeyenv` dropped
# silently would surface later as "DEEPSEEK_API_KEY is not set", far from its cause.
_OPENAI_KEYS = ("kind", "model", "baseUrl", "apiKeyEnv", "timeoutS")
# populate_by_name accepts them
_OPENAI_PYTHON_NAMES = frozenset({"base_url", "api_key_env", "timeout_s"})
_URL_SCHEMES = ("http://", "https://")
DEFAULT_BASE_URL = "https://api.deepseek.com"
DEFAULT_API_KEY_ENV = "DEEPSEEK_API_KEY"
DEFAULT_TIMEOUT_SECONDS = 120.0
MAX_TIMEOUT_SECONDS = 3600.0
# S18: a variable named as a key or a token, so that a spec cannot send any other secret of
# the environment (AWS_SECRET_ACCESS_KEY is named as a key, and is the user's to name).
_KEY_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*_(KEY|TOKEN)")
KEY_VARIABLE_RULE = "apiKeyEnv must name an environment variable ending in _KEY or _TOKEN"


def is_key_variable(name: str) -> bool:
    return _KEY_VARIABLE.fullmatch(name) is not None


USER_INFO_RULE = (
    "baseUrl must not hold user information (user:password@); "
    "put the key in the environment variable apiKeyEnv names"
)


def has_user_info(url: str) -> bool:
    return "@" in urlsplit(url).netloc


def completions_url(base_url: str) -> str:
    """`<baseUrl>/chat/completions`: the path joined, a query string kept after it."""
    parts = urlsplit(base_url)
    path = parts.path.rstrip("/") + "/chat/completions"
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def shown_url(url: str) -> str:
    """`url` as logs and messages name it: without user information or query string (S18:
    either may hold a key)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return "(a malformed URL)"
    if ":" in host:
        host = f"[{host}]"
    netloc = host if port is None else f"{host}:{port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "…" if parts.query else "", ""))


class OpenAIModelSpec(WireModel):
    model_config = _STRICT
    kind: Literal["openai"] = "openai"
    model: NonEmptyStr
    base_url: str | None = None
    api_key_env: str | None = Field(
        default=None,
        description=KEY_VARIABLE_RULE + ".",
        json_schema_extra={"pattern": f"^{_KEY_VARIABLE.pattern}$"},
    )
    timeout_s: float | None = Field(
        default=None,
        gt=0,
        le=MAX_TIMEOUT_SECONDS,
        description="Seconds one model request may take, reading the reply included "
        f"(default {DEFAULT_TIMEOUT_SECONDS:g}).",
    )

    @model_validator(mode="before")
    @classmethod
    def _no_unknown_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            known = {*_OPENAI_KEYS, *_OPENAI_PYTHON_NAMES}
            unknown = [key for key in data if key not in known]
            if unknown:
                raise ValueError(
                    "; ".join(
                        f"openai model spec: unknown key {key!r}{_near(str(key))}; "
                        f"expected {', '.join(_OPENAI_KEYS)}"
                        for key in unknown
                    )
                )
        return data

    @field_validator("base_url")
    @classmethod
    def _http_only(cls, url: str | None) -> str | None:
        if url is None:
            return url
        if not url.lower().startswith(_URL_SCHEMES):
            raise ValueError(f"baseUrl {shown_url(url)!r} must be an http:// or https:// URL")
        try:
            user_info = has_user_info(url)
        except ValueError as exc:  # urlsplit's: an unclosed "[" of an IPv6 host, a bad port
            raise ValueError(f"baseUrl is not a valid URL ({exc})") from None
        if user_info:  # S18; never echoed: it holds a password
            raise ValueError(USER_INFO_RULE)
        return url

    @field_validator("api_key_env")
    @classmethod
    def _named_as_a_key(cls, name: str | None) -> str | None:
        if name is not None and not is_key_variable(name):
            raise ValueError(f"{KEY_VARIABLE_RULE}, not {name!r}")
        return name


def _near(key: str) -> str:
    folded = key.replace("_", "").lower()
    near = [k for k in _OPENAI_KEYS if k.lower() == folded]
    return f" (did you mean {near[0]!r}?)" if near else ""


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
    """'{"kind": "openai", "model": NAME}' (optional "baseUrl", "apiKeyEnv", "timeoutS"), """
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
    elif kind == "value_error" and loc[1:2] in (("baseUrl",), ("apiKeyEnv",)):
        what, forms = msg.removeprefix("Value error, "), ""
    elif kind == "value_error":  # our own sentences (unknown keys) name their path
        what, forms = msg.removeprefix("Value error, "), ""
    else:
        path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc[1:])
        what, forms = f"{path.lstrip('.')}: {msg}", forms if kind == "missing" else ""
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{what}{more}{forms}"
