"""The model slot of an external (MCP) session: its agent runs outside askbridge (X1).

The session header records `EXTERNAL_MODEL_SPEC` (`{"kind": "external"}`) and
`make_model` builds this for it, so loading such a session needs no branch of
its own. Such a session runs no turn (`Session.runs_turns`), so nothing ever
asks this model; asking it anyway is a bug, reported as MODEL_ERROR. Like
`none`, `external` is not a ModelSpec a client may send.
"""

from __future__ import annotations

from typing import Any

from askbridge.core import ModelError

from .base import History, ModelResponse, Tools

EXTERNAL_MODEL_KIND = "external"
EXTERNAL_MODEL_SPEC: dict[str, Any] = {"kind": EXTERNAL_MODEL_KIND}


class ExternalModel:
    reads_history = False  # never asked (no turn runs): nothing to read the log for

    async def complete(self, history: History, tools: Tools, request_index: int) -> ModelResponse:
        raise ModelError("an external (MCP) session has no model: its agent runs outside")
