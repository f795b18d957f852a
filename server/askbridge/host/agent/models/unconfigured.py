"""The model of a session that was given none: it says so instead of ending turns silently.

With no `--model` and no model in the client's settings the host records
`NO_MODEL_SPEC` (`{"kind": "none"}`) in the session header, so the header says
what the session really ran with; `make_model` builds this adapter for it. Every
request is answered with one agent message telling the user how to configure a
model (no tool calls, so the turn then ends), and logged at WARNING. `none` is
not a ModelSpec a client may send: it only ever comes from the host's default.
"""

from __future__ import annotations

import logging
from typing import Any

from .base import History, ModelResponse, Tools

NO_MODEL_KIND = "none"
NO_MODEL_SPEC: dict[str, Any] = {"kind": NO_MODEL_KIND}
NO_MODEL_TEXT = (
    "askbridge has no model configured; pass --model to askbridge serve or acp (for example "
    '--model \'{"kind": "openai", "model": "deepseek-chat"}\' with DEEPSEEK_API_KEY set, or '
    "script:PATH), or set a model in your editor's askbridge settings."
)

log = logging.getLogger("askbridge.host.models")


class UnconfiguredModel:
    async def complete(self, history: History, tools: Tools, request_index: int) -> ModelResponse:
        session = history[0].get("sessionId") if history else None
        log.warning("session %s has no model configured; told the user to pass --model", session)
        return ModelResponse(text=NO_MODEL_TEXT)
