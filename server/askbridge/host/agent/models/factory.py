"""Build the Model a session's ModelSpec names.

`make_model(spec)` takes the ModelSpec in its JSON form (protocol.md, camelCase
keys) or a pydantic model of it, and dispatches on `kind`:

- `"script"` → ScriptModel(spec["steps"])
- `"openai"` → OpenAIChatModel(model, baseUrl?, apiKeyEnv?, timeoutS?)
- `"none"` → UnconfiguredModel, the host's default when no model was given
  (never sent by a client: the wire's ModelSpec has no such kind)
- `"external"` → ExternalModel, an MCP session's slot: its agent runs outside (X1)

An unknown kind or a malformed spec raises ValueError, which `session/new`
turns into `-32602`. Building never contacts an endpoint and never reads the
API key; call `check()` on an OpenAIChatModel to fail early on a missing key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from .base import Model
from .external_agent import EXTERNAL_MODEL_KIND, ExternalModel
from .openai import (
    DEFAULT_API_KEY_ENV,
    DEFAULT_BASE_URL,
    DEFAULT_TIMEOUT_SECONDS,
    OpenAIChatModel,
)
from .script import ScriptModel
from .unconfigured import NO_MODEL_KIND, UnconfiguredModel

MODEL_KINDS = ("script", "openai")


def _optional_string(spec: Mapping[str, Any], key: str, default: str) -> str:
    value = spec.get(key)
    if value is None:
        return default
    if not isinstance(value, str) or not value:
        raise ValueError(f"openai model spec: {key} must be a non-empty string")
    return value


def _timeout(spec: Mapping[str, Any]) -> float:
    value = spec.get("timeoutS")
    if value is None:
        return DEFAULT_TIMEOUT_SECONDS
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ValueError("openai model spec: timeoutS must be a positive number of seconds")
    return float(value)


def make_model(spec: Mapping[str, Any] | BaseModel, env: Mapping[str, str] | None = None) -> Model:
    """The Model for `spec`; ValueError names what is wrong with it.

    `env` is where an endpoint model reads its API key (H5: the environment of the
    front door whose client created or loaded the session); default os.environ.
    """
    if isinstance(spec, BaseModel):
        spec = spec.model_dump(mode="json", by_alias=True, exclude_none=True)
    if not isinstance(spec, Mapping):
        raise ValueError("model spec must be an object with a kind")
    kind = spec.get("kind")
    if kind == "script":
        if "steps" not in spec:
            raise ValueError("script model spec needs steps (a list of steps)")
        return ScriptModel(spec["steps"])
    if kind == "openai":
        model = spec.get("model")
        if not isinstance(model, str) or not model:
            raise ValueError("openai model spec needs model (the provider's model name)")
        return OpenAIChatModel(
            model,
            base_url=_optional_string(spec, "baseUrl", DEFAULT_BASE_URL),
            api_key_env=_optional_string(spec, "apiKeyEnv", DEFAULT_API_KEY_ENV),
            timeout=_timeout(spec),
            env=env,
        )
    if kind == NO_MODEL_KIND:
        return UnconfiguredModel()
    if kind == EXTERNAL_MODEL_KIND:
        return ExternalModel()
    raise ValueError(f"unknown model kind {kind!r}; expected one of {', '.join(MODEL_KINDS)}")
