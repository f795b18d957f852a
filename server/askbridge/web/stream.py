"""The live event stream (B6): server-sent events, the whole state first, then changes.

Each connection is one browser page (`client` id `b-N`, sent in the first event); its
claims end with it (C4), so a phone that sleeps stops holding a countdown. A page
that reconnects gets a fresh `state` event and replaces everything it showed. The
stream ends within CHECK_S once its session does (S14: a replaced or expired token),
so a revoked page stops seeing questions though it asks for nothing.

An event is written to the socket inside `Bridge.emit`, in the loop step that made
it, not handed to a task through a queue: the queue's wake-ups cost a few loop
turns per event, and in them the door's other work for the same ask (the timed
card's probe claim, a listing) wrote to the host first. On this 2-core machine
under load that was a median ~6 ms (up to 13 ms) between the ask reaching the door
and its card leaving (the page-vs-window target). The backlog bound is the
server's (http.py MAX_BACKLOG), replacing the queue, which had none.

Only what changes a card on screen is written at once (URGENT); a view or a session
title waits up to HOLD_S, or rides in the same write as the next urgent event, in
order. The host sends a question's `didChange` in the same pipe write as its
`userQuestions/ask`: written on its own, the view woke the browser first, and the
door, preempted for that, read the ask a median ~2.5 ms later (up to 14 ms, same
trace), with the card waiting behind it in the door's own buffer.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable
from typing import Any

import anyio

from .bridge import Bridge
from .messages import Response, Write

KEEPALIVE_S = 15.0
CHECK_S = 1.0
URGENT = frozenset({"state", "card", "closed"})
HOLD_S = 0.002
_clients = itertools.count(1)


def event_stream(bridge: Bridge, still_valid: Callable[[], bool]) -> Response:
    client = f"b-{next(_clients)}"

    async def body(write: Write) -> None:
        loop = asyncio.get_running_loop()
        held: list[bytes] = []
        timer: asyncio.TimerHandle | None = None

        def flush() -> None:
            nonlocal timer
            if timer is not None:
                timer.cancel()
                timer = None
            if held:
                write(b"".join(held))
                held.clear()

        def push(event: dict[str, Any]) -> None:
            nonlocal timer
            held.append(_frame(event))
            if event.get("type") in URGENT:
                flush()
            elif timer is None:
                timer = loop.call_later(HOLD_S, flush)

        # The state and the listener in one step: no event falls between them.
        push({**bridge.state(), "client": client})
        bridge.listeners.add(push)
        bridge.browsers_changed()
        try:
            quiet = 0.0
            while still_valid():
                await anyio.sleep(CHECK_S)
                quiet += CHECK_S
                if quiet >= KEEPALIVE_S:  # a comment line now and then keeps NAT from timing out
                    quiet = 0.0
                    held.append(b": keepalive\n\n")
                    flush()
        finally:  # the browser went away (or the door stops): its claims end (C4)
            if timer is not None:
                timer.cancel()
            bridge.listeners.discard(push)
            bridge.browsers_changed()
            bridge.release_all(client)

    headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    return Response(200, content_type="text/event-stream", headers=headers, stream=body)


def _frame(event: dict[str, Any]) -> bytes:
    data = json.dumps(event, separators=(",", ":"), ensure_ascii=False)
    return f"data: {data}\n\n".encode()
