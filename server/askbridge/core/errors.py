"""The one error taxonomy (behavior.md E).

Every failure the core raises is a `UserQuestionError(message, code)`, a
`HarnessError`, so a tool failure keeps `{name, code}` all the way to the wire.
`HarnessError` itself lives in `askbridge.protocol.errors`, beside the codes, so
that `askbridge.jsonrpc` maps it to the wire (-32000 `{name, code}`) in one
place for every door without importing the core.
"""

from __future__ import annotations

from typing import Any

from askbridge.protocol.errors import FIXED_MESSAGES, ErrorCode
from askbridge.protocol.errors import HarnessError as HarnessError


class UserQuestionError(HarnessError):
    name = "UserQuestionError"

    @classmethod
    def of(cls, code: ErrorCode | str) -> UserQuestionError:
        """The error for a code whose message is fixed by behavior.md."""
        return cls(FIXED_MESSAGES[code], str(code))


class ToolInputError(HarnessError):
    name = "ToolInputError"

    def __init__(self, message: str) -> None:
        super().__init__(message, ErrorCode.BAD_TOOL_INPUT)


class ToolError(HarnessError):
    name = "ToolError"


class SessionError(HarnessError):
    name = "SessionError"

    @classmethod
    def unknown(cls, session_id: str) -> SessionError:
        return cls(f"unknown session {session_id}", ErrorCode.UNKNOWN_SESSION)


class ModelError(HarnessError):
    """The model could not answer: missing API key, unreachable endpoint, a garbage body."""

    name = "ModelError"

    def __init__(self, message: str) -> None:
        super().__init__(message, ErrorCode.MODEL_ERROR)


class StoreError(HarnessError):
    """The event store cannot be used or a write failed (STORE_ERROR, S4).

    The message is meant for the human running askbridge: it names the file or
    directory and says what is wrong.
    """

    name = "StoreError"

    def __init__(self, message: str, code: str = ErrorCode.STORE_ERROR) -> None:
        super().__init__(message, code)


class StoreDamaged(StoreError):
    """S6: stored events cannot be read; never mistaken for an empty or unknown session."""

    def __init__(self, message: str) -> None:
        super().__init__(message, ErrorCode.STORE_DAMAGED)


class StoreLost(StoreError):
    """S5: the data directory was deleted or replaced under a running host."""

    def __init__(self, message: str) -> None:
        super().__init__(message, ErrorCode.STORE_LOST)


class StoreUnavailable(StoreError):
    """G3: the team store (PostgreSQL) cannot be reached; the host stays up and reconnects."""

    PREFIX = "the team store is unreachable: "

    def __init__(self, why: str) -> None:
        super().__init__(self.PREFIX + why, ErrorCode.STORE_UNAVAILABLE)


def tool_outcome_unknown() -> ToolError:
    return ToolError(FIXED_MESSAGES[ErrorCode.TOOL_OUTCOME_UNKNOWN], ErrorCode.TOOL_OUTCOME_UNKNOWN)


_NAMED: dict[str, type[HarnessError]] = {
    cls.name: cls for cls in (UserQuestionError, ToolInputError, ToolError, SessionError)
}


def unknown_tool(name: str) -> ToolError:
    return ToolError(f"unknown tool {name}", ErrorCode.UNKNOWN_TOOL)


def tool_failed(exc: Exception) -> ToolError:
    """A tool that raised something that is not a HarnessError (a bug): the model sees it."""
    return ToolError(str(exc) or type(exc).__name__, ErrorCode.TOOL_FAILED)


def error_from_wire(message: str, data: Any) -> HarnessError | None:
    """E2: rebuild a HarnessError from a wire error's `data = {name, code}`.

    A UserQuestionError with a code of the table gets the table's message so the
    model always sees the same text for the same code; otherwise the client's
    message is kept. Returns None when `data` is not shaped like one of ours.
    """
    if not isinstance(data, dict):
        return None
    name, code = data.get("name"), data.get("code")
    if not isinstance(name, str) or not isinstance(code, str):
        return None
    if name == UserQuestionError.name:
        return UserQuestionError(FIXED_MESSAGES.get(code, message), code)
    cls = _NAMED.get(name)
    if cls is None or cls is ToolInputError:
        return HarnessError(message, code) if cls is None else ToolInputError(message)
    return cls(message, code)
