"""The one host bootstrap: a Host on the store and its `host.sock` listener (H1, H3, H6, S5).

`askbridge host` (main.py) and an inline front door (inline.py) run the same
host; they differ only in what runs beside it (`body`): the host process waits for
idleness, `--stop` and signals; an inline front door serves its own client and
stops the host when that one is done.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import TaskGroup

from askbridge.core import Clock
from askbridge.host.host import Host
from askbridge.host.options import HostSettings
from askbridge.jsonrpc.flushing import flushes_of

from .doors import FATAL_GRACE_S
from .gc_tuning import tune_gc_for_serving
from .listener import HostSocket

Body = Callable[[Host, HostSocket, TaskGroup], Awaitable["int | None"]]


async def serve_host(
    store: Any,
    data_dir: Path,
    settings: HostSettings,
    sock: socket.socket,
    body: Body,
    *,
    inline: bool,
    clock: Clock | None = None,
) -> int:
    """Run the data directory's Host and listen on `sock` (bound already, H2/H3) while
    `body(host, listener, tg)` runs, and until the task group `tg` is done; the exit status:
    what `body` returned, or 1 once the data directory is lost (S5). `clock`: the timed
    waits' (a test driver's ManualClock; the real one by default)."""
    tune_gc_for_serving()
    status = 0
    with anyio.CancelScope() as everything:
        async with (
            Host(
                store,
                model=settings.model,
                ask_user_question=settings.ask_user_question,
                max_turn_requests=settings.max_turn_requests,
                delegation=settings.delegation,
                clock=clock,
                # What a commit tells every door is written in the commit's own loop turn.
                frames=flushes_of(asyncio.get_running_loop()),
            ) as host,
            anyio.create_task_group() as tg,
        ):

            def fatal(code: int) -> None:  # S5: the data directory is gone
                nonlocal status
                status = code
                listener.stopping(
                    "data directory lost", f"lost its data directory; see {data_dir}/host.log"
                )
                # Requests in flight answer STORE_LOST first (nothing is written any more).
                asyncio.get_running_loop().call_later(FATAL_GRACE_S, everything.cancel)

            host.on_fatal = fatal
            # `--stop`: an inline host stops everything, its own client's door with it; the
            # host process ends its task group, and the Host closes as at an idle exit.
            on_stop = everything.cancel if inline else tg.cancel_scope.cancel
            listener = HostSocket(host, data_dir, on_stop=on_stop, inline=inline, sock=sock)
            await tg.start(listener.run)
            own = await body(host, listener, tg)
            if own is not None:
                status = own
    return status
