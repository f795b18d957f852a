"""`userQuestions/*` payloads of the LSP door (protocol.md "Questions").

Server → client: `userQuestions/ask` (request; result an Answer; a client
ends a card without answering by replying with an error whose data is
`ErrorData`), `userQuestions/didChange` (notification) and the one
`$/progress` frame of a claim. Client → server: `attachWait`, `answer`,
`withdrawReply`, `list`. The ACP door's `_askbridge/*` methods reuse these
shapes where protocol.md says "as `userQuestions/...`".
"""

from __future__ import annotations

from pydantic import StrictInt, StrictStr

from .base import WireModel
from .common import CallScoped, SessionScoped
from .vocabulary import Answer, ProjectionView, QuestionItem, Wait, WaitFrame

# A JSON-RPC progress token is an integer or a string; Strict* keeps `1` and `"1"` apart,
# because the server echoes the token exactly in `$/progress`.
ProgressToken = StrictInt | StrictStr


class UserQuestionsAskParams(WireModel):
    """One waterfall dispatch that reached the client; `wait` as in V5 (absent: blocking ask)."""

    session_id: str
    agent_id: str
    questions: list[QuestionItem]
    wait: Wait | None = None


# The result of `userQuestions/ask`: an Answer (V4), checked by the server (schema, then V8).
UserQuestionsAskResult = Answer


class DidChangeParams(WireModel):
    """Sent whenever the session's projection view (V7) changes."""

    session_id: str
    view: ProjectionView


class AttachWaitParams(CallScoped):
    """Claim a timed wait (C1–C5) and receive its one frame on `partialResultToken`."""

    partial_result_token: ProgressToken


class WaitProgressParams(WireModel):
    """`$/progress {token, value: {remainingMs}}`: the one frame of a claim (C3)."""

    token: ProgressToken
    value: WaitFrame


class AnswerParams(CallScoped):
    """A late reply (L1–L6) to a `continued` question."""

    answer: Answer


class WithdrawReplyParams(CallScoped):
    """Remove a queued, not yet admitted reply (L5)."""


class ListParams(SessionScoped):
    """Ask for the session's projection view (V7)."""


# Results: attachWait → null; answer → bool; withdrawReply → bool; list → ProjectionView.
ListResult = ProjectionView
