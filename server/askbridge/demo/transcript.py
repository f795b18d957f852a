"""Print what the server tells the client, as it arrives: the demo's running transcript.

`Transcript.follow()` runs in the demo's task group and prints every new
`session/update` (agent text, tool calls, the exact tool results the model
gets, admitted late replies, turn boundaries) and every question-view change
that matters to the story (a call becoming `continued`, a continued call
becoming settled) from `AskbridgeClient.notifications`. While a card is open
printing is `paused()`, so nothing scribbles over the person's input line and
what the server sent meanwhile (say, the pending result of a card it just
withdrew) comes after the card; the question handler calls `flush()` before
showing a card, so the agent's words come before its question. After the
result of a call in `claimed` (this terminal held a claim on its wait) a line
says the claim ended with the wait (docs/rules.md TW10).
What the server sends is printed as `Text` with its controls escaped (S17),
and JSON is spaced so that rich wraps it between tokens, never inside a word.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from askbridge.testing import AskbridgeClient

from .terminal import shown, shown_line


def _text_of(content: Any) -> str:
    """The text of a content block, or of a list of them."""
    blocks = content if isinstance(content, list) else [content]
    return "".join(b.get("text", "") for b in blocks if isinstance(b, dict))


class Transcript:
    def __init__(self, console: Console, client: AskbridgeClient) -> None:
        self.console, self.client = console, client
        self.session_id: str | None = None
        self._printed = 0
        self._paused = 0
        self._states: dict[str, str] = {}  # callId -> last view state seen
        self.claimed: set[str] = set()  # calls this terminal claimed: their result ends the claim

    async def follow(self) -> None:
        """Print notifications as they come, until cancelled."""
        while True:
            if not self._paused:
                self.flush()
            await self.client.wait_changed()

    @contextmanager
    def paused(self) -> Iterator[None]:
        self._paused += 1
        try:
            yield
        finally:
            self._paused -= 1
        if not self._paused:
            self.flush()

    def flush(self) -> None:
        notifications = self.client.notifications
        while self._printed < len(notifications):
            method, params = notifications[self._printed]
            self._printed += 1
            if not isinstance(params, dict) or params.get("sessionId") != self.session_id:
                continue
            if method == "session/update":
                self._update(params["update"])
            elif method == "userQuestions/didChange":
                self._view_changes(params["changes"])

    # -- one line per thing that happened -------------------------------------------------

    def line(self, *parts: str | tuple[str, str]) -> None:
        """One line, wrapped between words; its parts shown escaped (S17)."""
        self.console.print(shown_line(*parts))

    def prose(self, prefix: Text, body: str) -> None:
        """Words wrapped under themselves, beside a prefix such as `agent ›`."""
        grid = Table.grid()
        grid.add_column(no_wrap=True)
        grid.add_column()
        grid.add_row(prefix, shown(body))
        self.console.print(grid)

    def _update(self, update: dict[str, Any]) -> None:
        kind = update.get("sessionUpdate")
        if kind == "turn_started":
            cause = update.get("cause")
            why = "your prompt" if cause == "prompt" else "a late reply in its inbox woke the agent"
            self.console.print()
            turn = update.get("turnId")
            self.console.rule(shown(f"turn {turn} started · cause: {cause} ({why})"))
        elif kind == "agent_message_chunk":
            self.prose(Text("agent › ", "bold cyan"), _text_of(update.get("content")))
        elif kind == "tool_call":
            raw = update.get("rawInput") if isinstance(update.get("rawInput"), dict) else {}
            timeout = raw.get("timeout") if isinstance(raw, dict) else None
            wait = "waits until answered" if timeout == -1 else f"timeout {timeout} s"
            self.line(
                ("  ⚙ tool call ", "dim"),
                (str(update.get("title")), "bold"),
                (f" {update.get('toolCallId')} ({wait})", "dim"),
            )
        elif kind == "tool_call_update":
            text = _text_of([c.get("content") for c in update.get("content") or []])
            pending = text.startswith('{"pending":true')
            label = "pending" if pending else str(update.get("status"))
            style = (
                "yellow" if pending else ("red" if update.get("status") == "failed" else "green")
            )
            # Wrapped between JSON tokens, not inside them: the same JSON, spaced after its
            # commas and colons so the terminal's width breaks it where a reader expects.
            self.prose(
                Text.assemble(
                    ("  ↳ result ", "dim"),
                    (f"[{label}]", f"bold {style}"),
                    (" the model receives: ", "dim"),
                ),
                _spaced_json(text),
            )
            if update.get("toolCallId") in self.claimed:  # TW10: closing the wait ends its claims
                self.line(("  ⏵ claim released: ", "dim"), "the wait ended, and the claim with it")
        elif kind == "user_message":
            source = update.get("source") or {}
            self.prose(
                Text("  ✉ ", "magenta"),
                f"late reply admitted as a user message ({source.get('callId')}, "
                f"{source.get('outcome')}): {_spaced_json(_text_of(update.get('content')))}",
            )
        elif kind == "turn_ended":
            self.line((f"turn {update.get('turnId')} ended: {update.get('stopReason')}", "dim"))
            if error := update.get("error"):  # a failed turn is told here, once
                self.line(("  ✗ the turn failed: ", "red"), str(error.get("message")))

    def _view_changes(self, changes: list[dict[str, Any]]) -> None:
        """Report the two view changes the demo is about: continued, then settled late."""
        for change in changes:
            call_id, state = change["callId"], change["state"]
            before = self._states.get(call_id)
            self._states[call_id] = state
            if state == before:
                continue
            if state == "continued":
                self.line(
                    ("  ◷ question view: ", "dim"),
                    (f"{call_id} is now continued", "yellow"),
                    (" (pending: the tool returned, the question stays answerable)", "dim"),
                )
            elif state == "settled" and before == "continued":
                answers: Any = change.get("answers", [])
                self.line(
                    ("  ◷ question view: ", "dim"),
                    (f"{call_id} is now settled", "green"),
                    (f" with {_spaced_json(json.dumps(answers))}", "dim"),
                )


def _spaced_json(text: str) -> str:
    """`text` re-spaced (`, ` and `: `) when it is JSON, so that it wraps between tokens."""
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
