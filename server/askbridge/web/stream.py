"""The live event stream (B6): server-sent events, the whole state first, then changes.

Each connection is one browser page (`client` id `b-N`, sent in the first event); its
claims end with it (C4), so a phone that sleeps stops holding a countdown. A page
that reconnects gets a fresh `state` event and replaces everything it showed.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

from .bridge import Bridge
from .http import Response, Write

KEEPALIVE_S = 15.0
_clients = itertools.count(1)


def event_stream(bridge: Bridge) -> Response:
    client = f"b-{next(_clients)}"

    async def body(write: Write) -> None:
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        bridge.listeners.add(queue.put_nowait)
        bridge.browsers_changed()
        try:
            await _send(write, {**bridge.state(), "client": client})
            while True:
                try:
                    event = await asyncio.wait_for(queue.get(), KEEPALIVE_S)
                except TimeoutError:
                    await write(b": keepalive\n\n")
                    continue
                await _send(write, event)
        finally:  # the browser went away (or the door stops): its claims end (C4)
            bridge.listeners.discard(queue.put_nowait)
            bridge.browsers_changed()
            bridge.release_all(client)

    headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    return Response(200, content_type="text/event-stream", headers=headers, stream=body)


async def _send(write: Write, event: dict[str, Any]) -> None:
    data = json.dumps(event, separators=(",", ":"), ensure_ascii=False)
    await write(f"data: {data}\n\n".encode())
