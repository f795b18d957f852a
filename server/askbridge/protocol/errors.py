"""Error codes (behavior.md E, protocol.md "Errors") and JSON-RPC error numbers.

One vocabulary for every door: each code travels as `data = {name, code}` of a
-32000 error, mapped in one place (`askbridge.jsonrpc`), and as `{name, code}`
of a failed tool result.
"""

from __future__ import annotations

from enum import IntEnum, StrEnum
from typing import Any


class HarnessError(Exception):
    """A failure with a stable machine code; `name` is what the wire calls it.

    The base of the one error taxonomy (subclasses in `askbridge.core.errors`).
    """

    name = "HarnessError"

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.message = message
        self.code = code

    def to_data(self) -> dict[str, str]:
        return {"name": self.name, "code": self.code}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, {self.code!r})"


class ErrorCode(StrEnum):
    ASK_ABORTED = "ASK_ABORTED"
    EMPTY_QUESTIONS = "EMPTY_QUESTIONS"
    CALLER_NOT_LIVE = "CALLER_NOT_LIVE"
    DELEGATED_CALLER = "DELEGATED_CALLER"
    NO_PROVIDER = "NO_PROVIDER"
    BAD_INTENT = "BAD_INTENT"
    BAD_TIMEOUT = "BAD_TIMEOUT"
    DUPLICATE_WAIT = "DUPLICATE_WAIT"
    ASK_TIMED_OUT = "ASK_TIMED_OUT"
    ASK_CANCELLED = "ASK_CANCELLED"
    ASK_DECLINED = "ASK_DECLINED"
    BAD_ANSWER = "BAD_ANSWER"
    REPLY_QUEUED = "REPLY_QUEUED"
    PROVIDER_ERROR = "PROVIDER_ERROR"
    BAD_TOOL_INPUT = "BAD_TOOL_INPUT"
    TOOL_OUTCOME_UNKNOWN = "TOOL_OUTCOME_UNKNOWN"
    UNKNOWN_SESSION = "UNKNOWN_SESSION"
    BAD_QUESTION = "BAD_QUESTION"
    MODEL_ERROR = "MODEL_ERROR"
    UNKNOWN_TOOL = "UNKNOWN_TOOL"
    TOOL_FAILED = "TOOL_FAILED"
    STORE_ERROR = "STORE_ERROR"
    STORE_LOST = "STORE_LOST"
    STORE_DAMAGED = "STORE_DAMAGED"
    STORE_UNAVAILABLE = "STORE_UNAVAILABLE"
    EXTERNAL_SESSION = "EXTERNAL_SESSION"


# The fixed message of each code whose text does not depend on the call (E2 rebuilds these).
FIXED_MESSAGES: dict[str, str] = {
    ErrorCode.ASK_ABORTED: "ask_user_question was aborted before the user answered",
    ErrorCode.EMPTY_QUESTIONS: "ask_user_question requires at least one question",
    ErrorCode.CALLER_NOT_LIVE: (
        "human interaction requires the exact live calling agent when an agent is supplied"
    ),
    ErrorCode.DELEGATED_CALLER: (
        "human interaction is unavailable while the calling agent is owned by another live "
        "agent; include the unresolved question or decision in the child agent's final result"
    ),
    ErrorCode.NO_PROVIDER: "no user-questions answerer accepted the request",
    ErrorCode.BAD_TIMEOUT: "timeout must fit a positive platform timer",
    ErrorCode.DUPLICATE_WAIT: "the question call already has a foreground wait",
    ErrorCode.ASK_TIMED_OUT: "ask_user_question timed out before the user answered",
    ErrorCode.ASK_CANCELLED: "the user cancelled ask_user_question",
    ErrorCode.ASK_DECLINED: "the user declined to answer ask_user_question",
    ErrorCode.REPLY_QUEUED: "a reply is already queued for this question",
    ErrorCode.TOOL_OUTCOME_UNKNOWN: (
        "the tool call was interrupted before it finished; its outcome is unknown"
    ),
}


class RpcErrorCode(IntEnum):
    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    DOMAIN_ERROR = -32000
    REQUEST_CANCELLED = -32800


class ClientGone(ConnectionError):
    """The client's connection ended while the host was asking it."""


class ClientErrorReply(Exception):
    """The client answered a card with an error: its message, `data` and RPC `code`.

    The core rebuilds `data = {name: "UserQuestionError", code}` as that error (E2);
    anything else becomes PROVIDER_ERROR carrying exactly the client's message (E1).
    Here, below the host and `jsonrpc/`, so that the one mapping of a client's RPC
    failure (`jsonrpc.client_failure`) serves every door.
    """

    def __init__(self, message: str, data: Any = None, code: int | None = None) -> None:
        super().__init__(message)
        self.data = data
        self.code = code
