"""The web door's one LSP client of the host: questions in, answers and claims out.

The door runs `askbridge serve --data-dir D` as a child and speaks the LSP door's
protocol to it (protocol.md "Questions"), declaring `experimental.userQuestions`,
so the host treats every browser behind the door as one rendering window (M1–M7).

- `userQuestions/ask` becomes a *card* (door-local id `c-N`); the first browser
  answer that passes V8 replies to it. `$/cancelRequest` closes it (`withdrawn`).
- Claims (B4, C1–C5): each browser holds its own claim on a card; the door holds
  one `userQuestions/attachWait` while any browser (or its own probe) claims.
  The probe is a claim taken and dropped at once when a timed card arrives, to
  learn the fixed deadline (TW5: a claim never moves it) for the countdown.
- Views: every `userQuestions/didChange` is folded per session (the page shows
  continued questions from them, B5); late replies go through `userQuestions/answer`.
- Following (B1): external sessions come by themselves (M1); hosted root
  sessions are found with `session/list` and loaded (which subscribes the door),
  at start and then every `poll_s` (1 s) while a browser is connected — no work for
  the host while nobody looks (tests/web/test_web_idle.py counts). At
  start only the newest MAX_INITIAL are loaded.

Every change goes to `listeners` as one JSON-ready event dict.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
from anyio.abc import TaskGroup

from askbridge.jsonrpc import Connection, ConnectionClosed, RpcResponseError
from askbridge.protocol.views import apply_view_changes, empty_view

logger = logging.getLogger("askbridge.web")

MAX_INITIAL = 50
POLL_S = 1.0
RECENTLY_CLOSED = 1024
EXTERNAL = "mcp"

Event = dict[str, Any]


@dataclass
class Card:
    id: str
    session_id: str
    questions: list[dict[str, Any]]
    call_id: str | None
    timed: bool
    reply: asyncio.Future[dict[str, Any]]
    deadline: float | None = None  # loop time, from the probe's remainingMs
    holders: set[str] = field(default_factory=set)
    claim_scope: anyio.CancelScope | None = None
    # Set once the deadline is known, or the probe's claim ended without a frame.
    probed: anyio.Event = field(default_factory=anyio.Event)

    def public(self, now: float) -> Event:
        remaining = None if self.deadline is None else max(0, int((self.deadline - now) * 1000))
        return {
            "id": self.id,
            "sessionId": self.session_id,
            "callId": self.call_id,
            "questions": self.questions,
            "timed": self.timed,
            "remainingMs": remaining,
            "claimed": bool(self.holders - {PROBE}),
        }


PROBE = "door-probe"


class Bridge:
    def __init__(self, conn: Connection, poll_s: float = POLL_S) -> None:
        self.conn = conn
        self.poll_s = poll_s
        self.cards: dict[str, Card] = {}
        self.closed: OrderedDict[str, str] = OrderedDict()  # card id -> why (409 on answer)
        self.views: dict[str, dict[str, Any]] = {}
        self.sessions: dict[str, dict[str, Any]] = {}
        self.listeners: set[Callable[[Event], None]] = set()
        self._ids = itertools.count(1)
        self._tokens = itertools.count(1)
        self._progress: dict[str, Card] = {}
        self._tg: TaskGroup | None = None
        self._browsers = anyio.Event()
        conn.on_request("userQuestions/ask", self._on_ask)
        conn.on_notification("userQuestions/didChange", self._on_did_change)
        conn.on_notification("$/progress", self._on_progress)

    # -- life -----------------------------------------------------------------------------

    async def run(self, ready: Callable[[], None]) -> None:
        """Serve the connection until the host goes away; `ready()` once initialized."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            tg.start_soon(self._serve_then_stop, tg)
            await self.conn.request(
                "initialize",
                {
                    "processId": None,
                    "capabilities": {"experimental": {"userQuestions": {"version": 1}}},
                },
            )
            self.conn.notify("initialized", {})
            await self._follow(initial=True)
            ready()
            tg.start_soon(self._poll)

    async def _serve_then_stop(self, tg: TaskGroup) -> None:
        await self.conn.serve()
        tg.cancel_scope.cancel()

    def emit(self, event: Event) -> None:
        for listener in list(self.listeners):
            listener(event)

    def browsers_changed(self) -> None:
        if self.listeners:
            self._browsers.set()
        else:
            self._browsers = anyio.Event()

    def state(self) -> Event:
        now = asyncio.get_running_loop().time()
        return {
            "type": "state",
            "sessions": self.sessions,
            "cards": [c.public(now) for c in self.cards.values()],
            "views": self.views,
        }

    # -- following sessions (B1) ----------------------------------------------------------

    async def _poll(self) -> None:
        while True:
            await self._browsers.wait()
            await anyio.sleep(self.poll_s)
            if self.listeners:  # the last browser may have left during the sleep
                await self._follow()

    async def _follow(self, initial: bool = False) -> None:
        try:
            listed = (await self.conn.request("session/list", {}))["sessions"]
        except (ConnectionClosed, RpcResponseError, KeyError, TypeError):
            return
        fresh = [s for s in listed if s.get("sessionId") not in self.sessions]
        if initial:
            fresh = fresh[-MAX_INITIAL:]
        for info in fresh:
            sid = info["sessionId"]
            self.sessions[sid] = {"title": info.get("title"), "origin": info.get("origin")}
            self.emit({"type": "session", "sessionId": sid, **self.sessions[sid]})
            if info.get("origin") != EXTERNAL:
                try:
                    await self.conn.request("session/load", {"sessionId": sid})
                except RpcResponseError as exc:  # a damaged session must not stop the others
                    logger.warning("could not follow session %s: %s", sid, exc)

    def _notice(self, sid: str) -> None:
        if sid not in self.sessions:
            # An external session the host subscribed us to (X1); its title comes with
            # the next listing, which a fresh session triggers at once.
            self.sessions[sid] = {"title": None, "origin": None}
            if self._tg is not None:
                self._tg.start_soon(self._learn_titles)

    async def _learn_titles(self) -> None:
        try:
            listed = (await self.conn.request("session/list", {}))["sessions"]
        except (ConnectionClosed, RpcResponseError, KeyError, TypeError):
            return
        for info in listed:
            known = self.sessions.get(info.get("sessionId"))
            if known is not None and known.get("title") is None:
                known.update(title=info.get("title"), origin=info.get("origin"))
                self.emit({"type": "session", "sessionId": info["sessionId"], **known})

    # -- questions from the host ----------------------------------------------------------

    async def _on_ask(self, params: Any) -> Any:
        wait = params.get("wait") or {}
        card = Card(
            id=f"c-{next(self._ids)}",
            session_id=str(params.get("sessionId")),
            questions=list(params.get("questions") or []),
            call_id=wait.get("callId"),
            timed=bool(wait.get("timed")),
            reply=asyncio.get_running_loop().create_future(),
        )
        self._notice(card.session_id)
        self.cards[card.id] = card
        why = "withdrawn"
        try:
            if card.timed and self._tg is not None:
                self._tg.start_soon(self._probe, card)
            self.emit({"type": "card", "card": card.public(asyncio.get_running_loop().time())})
            answer = await card.reply
            why = "answered"
            return answer
        finally:
            self.cards.pop(card.id, None)
            self._forget(card.id, why)
            if card.claim_scope is not None:
                card.claim_scope.cancel()
            self.emit({"type": "closed", "cardId": card.id, "reason": why})

    def _forget(self, card_id: str, why: str) -> None:
        self.closed[card_id] = why
        if len(self.closed) > RECENTLY_CLOSED:
            self.closed.popitem(last=False)

    async def _on_did_change(self, params: Any) -> None:
        sid = str(params.get("sessionId"))
        self._notice(sid)
        self.views[sid] = apply_view_changes(self.views.get(sid, empty_view()), params["changes"])
        self.emit({"type": "view", "sessionId": sid, "view": self.views[sid]})

    async def _on_progress(self, params: Any) -> None:
        card = self._progress.pop(str(params.get("token")), None)
        value = params.get("value") or {}
        if card is not None and isinstance(value.get("remainingMs"), int):
            card.deadline = asyncio.get_running_loop().time() + value["remainingMs"] / 1000
            card.probed.set()
            self.emit({"type": "card", "card": card.public(asyncio.get_running_loop().time())})

    # -- claims (B4) ----------------------------------------------------------------------

    async def _probe(self, card: Card) -> None:
        self.claim(card, PROBE)
        with anyio.move_on_after(5):
            await card.probed.wait()
        self.release(card, PROBE)

    def claim(self, card: Card, holder: str) -> None:
        first = not card.holders
        card.holders.add(holder)
        if first and card.call_id is not None and self._tg is not None:
            scope = card.claim_scope = anyio.CancelScope()
            self._tg.start_soon(self._hold, card, scope)
        if holder != PROBE:
            self.emit({"type": "card", "card": card.public(asyncio.get_running_loop().time())})

    def release(self, card: Card, holder: str) -> None:
        if holder not in card.holders:
            return
        card.holders.discard(holder)
        if not card.holders and card.claim_scope is not None:
            card.claim_scope.cancel()  # $/cancelRequest: the host timer runs again (TW5)
            card.claim_scope = None
        if holder != PROBE and card.id in self.cards:
            self.emit({"type": "card", "card": card.public(asyncio.get_running_loop().time())})

    def release_all(self, holder: str) -> None:
        for card in list(self.cards.values()):
            self.release(card, holder)

    async def _hold(self, card: Card, scope: anyio.CancelScope) -> None:
        token = f"web-claim-{next(self._tokens)}"
        if card.deadline is None:
            self._progress[token] = card
        params = {"sessionId": card.session_id, "callId": card.call_id, "partialResultToken": token}
        with scope:
            try:
                await self.conn.request("userQuestions/attachWait", params)
            except (ConnectionClosed, RpcResponseError):
                pass
        self._progress.pop(token, None)
        card.probed.set()

    # -- answers --------------------------------------------------------------------------

    async def answer_late(self, session_id: str, call_id: str, answer: dict[str, Any]) -> bool:
        params = {"sessionId": session_id, "callId": call_id, "answer": answer}
        return bool(await self.conn.request("userQuestions/answer", params))
