"""Lifecycle and `session/*` payloads of the LSP door (protocol.md "Lifecycle", "Sessions").

`SessionSettings` (`{model?, askUserQuestion?}`) is the shape shared by
`initializationOptions`, `session/new` and ACP's `_meta.askbridge`; settings
left out fall back to the server's command-line defaults.
"""

from __future__ import annotations

from typing import Any, Literal

from .base import WireModel
from .common import (
    QUESTIONS_PROTOCOL_VERSION,
    EmptyParams,
    EmptyResult,
    QuestionsCapability,
    SessionScoped,
    StopReason,
    TextContent,
    declares_questions_capability,
)
from .model_spec import AskUserQuestionConfig, ModelSpec

SERVER_NAME = "askbridge"
# The key of the user-questions capability under LSP `capabilities.experimental`.
USER_QUESTIONS_CAPABILITY = "userQuestions"


class SessionSettings(WireModel):
    """Per-session settings a client may give; None means "use the server default"."""

    model: ModelSpec | None = None
    ask_user_question: AskUserQuestionConfig | None = None


class InitializationOptions(SessionSettings):
    """LSP `initialize` `initializationOptions`: defaults for this client's new sessions."""


class ExperimentalCapabilities(WireModel):
    """LSP `capabilities.experimental` as askbridge reads (client) and writes (server) it."""

    user_questions: QuestionsCapability | None = None


def server_experimental_capabilities() -> dict[str, Any]:
    """The server's `capabilities.experimental`: `{"userQuestions": {"version": 1}}`."""
    caps = ExperimentalCapabilities(
        user_questions=QuestionsCapability(version=QUESTIONS_PROTOCOL_VERSION)
    )
    return caps.dump()


def lsp_client_renders_questions(experimental: Any) -> bool:
    """True when a client's `capabilities.experimental` declares `userQuestions: {version: 1}`."""
    return declares_questions_capability(experimental, USER_QUESTIONS_CAPABILITY)


class ServerInfo(WireModel):
    """`serverInfo` of the initialize result."""

    name: str = SERVER_NAME
    version: str


class SessionNewParams(SessionSettings):
    cwd: str | None = None


class SessionNewResult(WireModel):
    session_id: str


class SessionLoadParams(SessionScoped):
    """Resume a stored session's root agent (P7, L5); history is not replayed in the LSP door."""


class SessionLoadResult(EmptyResult):
    pass


class SessionListParams(EmptyParams):
    pass


class SessionListEntry(WireModel):
    """A root session; `createdAt` is ISO 8601 UTC. `origin` is "mcp" for an external agent's
    session (X1: titled "<client name> — <cwd>"), "root" for askbridge's own."""

    session_id: str
    created_at: str
    title: str | None = None
    origin: Literal["root", "mcp"] | None = None


class SessionListResult(WireModel):
    sessions: list[SessionListEntry]


class SessionPromptParams(SessionScoped):
    prompt: list[TextContent]


class SessionPromptResult(WireModel):
    """Sent when that prompt's turn ends (`max_turn_requests` after the request limit)."""

    stop_reason: StopReason


class SessionCancelParams(SessionScoped):
    """Cancels the running turn and every queued prompt (a notification)."""
