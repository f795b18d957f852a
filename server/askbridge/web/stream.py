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

from aiohttp import web

from .bridge import Bridge

KEEPALIVE_S = 15.0
_clients = itertools.count(1)


async def event_stream(request: web.Request, bridge: Bridge) -> web.StreamResponse:
    client = f"b-{next(_clients)}"
    queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    response = web.StreamResponse(
        headers={
            "Content-Type": "text/event-stream",
            "Cache-Control": "no-store",
            "X-Accel-Buffering": "no",
        }
    )
    await response.prepare(request)
    bridge.listeners.add(queue.put_nowait)
    bridge.browsers_changed()
    try:
        await _send(response, {**bridge.state(), "client": client})
        while True:
            try:
                event = await asyncio.wait_for(queue.get(), KEEPALIVE_S)
            except TimeoutError:
                await response.write(b": keepalive\n\n")
                continue
            await _send(response, event)
    except ConnectionResetError:
        pass  # the browser went away; the finally below ends its claims
    finally:
        bridge.listeners.discard(queue.put_nowait)
        bridge.browsers_changed()
        bridge.release_all(client)
    return response


async def _send(response: web.StreamResponse, event: dict[str, Any]) -> None:
    data = json.dumps(event, separators=(",", ":"), ensure_ascii=False)
    await response.write(f"data: {data}\n\n".encode())
