"""`--host inline`: this front door is its data directory's host (H3).

It takes the data directory's lock (or fails naming the holder), serves its
own client on its own stdio, and listens on `host.sock` so that other front
doors may attach while it lives. It lives as long as its own client: when that
one is done, attached front doors are cut off (they exit 1, H8) and the
process exits with its own client's status. The LSP door answers a plain first
`initialize` before the heavy imports (lsp/early.py).

Nothing here is imported at module level that the early answer does not need
(argparse, the host's settings): the console script's plain `--host inline`
command line (entry.py) comes here without building a parser, and sets its
logging up only after the answer (`after_answer`), since nothing before it logs.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from askbridge.host.options import open_data_store

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    from anyio.abc import TaskGroup

    from askbridge.host.host import Host
    from askbridge.host.options import HostSettings

    from .listener import HostSocket


def run_inline(door: str, args: argparse.Namespace, data_dir: str, defaults: dict[str, Any]) -> int:
    return serve_inline(door, args.data_dir, data_dir, defaults)


def serve_inline(
    door: str,
    data_dir_arg: str | None,
    data_dir: str,
    defaults: dict[str, Any],
    after_answer: Callable[[], None] | None = None,
) -> int:
    """`run_inline` on the `--data-dir` flag's value; `after_answer` runs once the data
    directory is held and the early answer (if any) is sent, before the heavy imports."""
    store = open_data_store(data_dir_arg)
    if store is None:
        return 1
    from askbridge.hostsock import AttachError, bind_host_socket  # bound before any answer (H3)

    try:
        sock = bind_host_socket(Path(data_dir))
    except AttachError as exc:  # H1: the socket's folder refused
        store.close()
        print(f"askbridge: {exc}", file=sys.stderr)
        return 1
    try:
        early = None
        if door == "lsp":
            from askbridge.lsp.early import answer_initialize_early

            early = answer_initialize_early()
        if after_answer is not None:
            after_answer()
        import anyio  # only now: the early answer does not wait for it

        from askbridge.host.options import HostSettings

        return anyio.run(
            _serve,
            door,
            store,
            HostSettings.over_defaults(defaults),  # the host's defaults: its own client's flags
            Path(data_dir),
            defaults,
            early,
            sock,
        )
    finally:
        store.close()


async def _serve(
    door: str,
    store: Any,
    settings: HostSettings,
    data_dir: Path,
    defaults: dict[str, Any],
    early: Any,
    sock: Any,
) -> int:
    from askbridge.stdio import join_copiers, open_stdio

    from .bootstrap import serve_host
    from .doors import log_start, serve_door

    reader, writer = await open_stdio()

    async def own_client(host: Host, listener: HostSocket, tg: TaskGroup) -> int:
        log_start(door, data_dir, "inline", defaults)
        own = {"env": dict(os.environ), "options": defaults}
        status = await serve_door(host, door, reader, writer, own, early, data_dir)
        command = {"lsp": "serve"}.get(door, door)
        listener.stopping(
            "its own client is done (inline)",
            f"exited with its own client (askbridge {command} --host inline, pid {os.getpid()})",
        )
        listener.stop_doors()
        tg.cancel_scope.cancel()
        return status

    status = await serve_host(store, data_dir, settings, sock, own_client, inline=True)
    join_copiers()
    return status
