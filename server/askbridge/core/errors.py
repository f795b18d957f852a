"""The one error taxonomy (behavior.md E).

Every failure the core raises is a `UserQuestionError(message, code)`, a
`HarnessError`, so a tool failure keeps `{name, code}` all the way to the wire.
Front doors map these to JSON-RPC errors in exactly one place each.
"""

from __future__ import annotations

from typing import Any

from askbridge.protocol.errors import FIXED_MESSAGES, ErrorCode


class HarnessError(Exception):
    """A failure with a stable machine code; `name` is what the wire calls it."""

    name = "HarnessError"

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.message = message
        self.code = code

    def to_data(self) -> dict[str, str]:
        return {"name": self.name, "code": self.code}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, {self.code!r})"


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


def tool_outcome_unknown() -> ToolError:
    return ToolError(FIXED_MESSAGES[ErrorCode.TOOL_OUTCOME_UNKNOWN], ErrorCode.TOOL_OUTCOME_UNKNOWN)


_NAMED: dict[str, type[HarnessError]] = {
    cls.name: cls for cls in (UserQuestionError, ToolInputError, ToolError, SessionError)
}


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
