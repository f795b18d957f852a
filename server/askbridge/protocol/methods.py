"""Every JSON-RPC method name of protocol.md, as constants.

Use these instead of string literals so a typo is an import error. Names are
the exact wire names. The ACP Python SDK strips the leading underscore of
extension methods before calling `ext_method`/`ext_notification` (and adds it
back when sending), so compare SDK-side names with `sdk_ext_name(...)`.
"""

from __future__ import annotations

# -- LSP lifecycle and base protocol (handled largely by pygls) ---------------------------
INITIALIZE = "initialize"
INITIALIZED = "initialized"
SHUTDOWN = "shutdown"
EXIT = "exit"
CANCEL_REQUEST = "$/cancelRequest"
PROGRESS = "$/progress"
WINDOW_SHOW_MESSAGE_REQUEST = "window/showMessageRequest"
WINDOW_WORK_DONE_PROGRESS_CREATE = "window/workDoneProgress/create"

# -- Sessions (ACP-shaped; the same names in both doors) ----------------------------------
SESSION_NEW = "session/new"
SESSION_LOAD = "session/load"
SESSION_LIST = "session/list"
SESSION_PROMPT = "session/prompt"
SESSION_CANCEL = "session/cancel"
SESSION_UPDATE = "session/update"

# -- Questions, LSP door ------------------------------------------------------------------
USER_QUESTIONS_ASK = "userQuestions/ask"
USER_QUESTIONS_DID_CHANGE = "userQuestions/didChange"
USER_QUESTIONS_ATTACH_WAIT = "userQuestions/attachWait"
USER_QUESTIONS_ANSWER = "userQuestions/answer"
USER_QUESTIONS_WITHDRAW_REPLY = "userQuestions/withdrawReply"
USER_QUESTIONS_LIST = "userQuestions/list"

# -- ACP door: ACP's own client methods askbridge calls -----------------------------------
ACP_SESSION_REQUEST_PERMISSION = "session/request_permission"
ACP_ELICITATION_CREATE = "elicitation/create"

# -- ACP door: askbridge extension methods ------------------------------------------------
ACP_EXT_PREFIX = "_askbridge/"
ASKBRIDGE_ASK = "_askbridge/ask"
ASKBRIDGE_CANCEL_ASK = "_askbridge/cancelAsk"
ASKBRIDGE_ATTACH_WAIT = "_askbridge/attachWait"
ASKBRIDGE_RELEASE_WAIT = "_askbridge/releaseWait"
ASKBRIDGE_ANSWER = "_askbridge/answer"
ASKBRIDGE_WITHDRAW_REPLY = "_askbridge/withdrawReply"
ASKBRIDGE_LIST = "_askbridge/list"
ASKBRIDGE_DID_CHANGE = "_askbridge/didChange"
ASKBRIDGE_TURN = "_askbridge/turn"

# Requests a client sends to the LSP door (params parsed by the bridge).
LSP_CLIENT_REQUESTS = frozenset(
    {
        SESSION_NEW,
        SESSION_LOAD,
        SESSION_LIST,
        SESSION_PROMPT,
        USER_QUESTIONS_ATTACH_WAIT,
        USER_QUESTIONS_ANSWER,
        USER_QUESTIONS_WITHDRAW_REPLY,
        USER_QUESTIONS_LIST,
    }
)
LSP_CLIENT_NOTIFICATIONS = frozenset({SESSION_CANCEL})
LSP_SERVER_REQUESTS = frozenset({USER_QUESTIONS_ASK})
LSP_SERVER_NOTIFICATIONS = frozenset({SESSION_UPDATE, USER_QUESTIONS_DID_CHANGE})

# Extension requests an ACP client sends; the server sends the others.
ACP_CLIENT_EXT_REQUESTS = frozenset(
    {
        ASKBRIDGE_ATTACH_WAIT,
        ASKBRIDGE_RELEASE_WAIT,
        ASKBRIDGE_ANSWER,
        ASKBRIDGE_WITHDRAW_REPLY,
        ASKBRIDGE_LIST,
    }
)
ACP_SERVER_EXT_REQUESTS = frozenset({ASKBRIDGE_ASK})
ACP_SERVER_EXT_NOTIFICATIONS = frozenset(
    {ASKBRIDGE_CANCEL_ASK, ASKBRIDGE_DID_CHANGE, ASKBRIDGE_TURN}
)


def sdk_ext_name(wire_method: str) -> str:
    """The name the ACP SDK uses for an extension method: the wire name without its leading `_`."""
    if not wire_method.startswith("_"):
        raise ValueError(f"{wire_method!r} is not an extension method name")
    return wire_method[1:]


def wire_ext_name(sdk_method: str) -> str:
    """The wire name of an extension method the ACP SDK reports without its leading `_`."""
    return sdk_method if sdk_method.startswith("_") else "_" + sdk_method
