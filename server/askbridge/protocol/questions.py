"""`userQuestions/*` payloads of the LSP door (protocol.md "Questions").

Server → client: `userQuestions/ask` (request; result an Answer; a client
ends a card without answering by replying with an error whose data is
`ErrorData`), `userQuestions/didChange` (notification) and the one
`$/progress` frame of a claim. Client → server: `attachWait`, `answer`,
`withdrawReply`, `list`. The ACP door's `_askbridge/*` methods reuse these
shapes where protocol.md says "as `userQuestions/...`".
"""

from __future__ import annotations

from typing import Literal

from pydantic import StrictInt, StrictStr

from .base import WireModel
from .common import CallScoped, SessionScoped
from .vocabulary import Answer, AnswerItem, ProjectionView, QuestionItem, Wait, WaitFrame

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


class ViewChange(WireModel):
    """One change of a session's question view (V7), in the order it happened (S2).

    `open` carries the call's questions (asked, or re-asked: it moves to the end);
    `continued` and `removed` name the call only; `settled` carries the answers.
    An entry of a new subscriber's first didChange carries its questions in
    either active state.
    """

    call_id: str
    state: Literal["open", "continued", "settled", "removed"]
    questions: list[QuestionItem] | None = None
    answers: list[AnswerItem] | None = None


class DidChangeParams(WireModel):
    """Sent whenever the session's projection view (V7) changes: the changes, not the view.

    The first one a client gets for a session it just subscribed to carries every
    active entry with its questions; `userQuestions/list` returns the whole view.
    """

    session_id: str
    changes: list[ViewChange]


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
