"""`askbridge serve`: open the store, start the host, serve the LSP-framed protocol on stdio.

A plain first `initialize` is answered before the host and the wire models are
even imported (early.py), so an editor's start-up does not wait for them.

Exit status: 0 after `shutdown` + `exit` or at end of input (the client went
away: turns are cancelled, claims released, the store flushed and closed);
1 for `exit` without `shutdown`; 1 with a clear message on stderr when the
data directory cannot be used (in use by another process, damaged, newer).
"""

from __future__ import annotations

import argparse
import gc
from typing import TYPE_CHECKING, Any

from askbridge.host.options import host_settings, open_data_store

from .early import EarlyStart, answer_initialize_early

if TYPE_CHECKING:
    from askbridge.host.store_api import EventStore


def run_serve(args: argparse.Namespace) -> int:
    store = open_data_store(args)
    if store is None:
        return 1
    try:
        early = answer_initialize_early()
        import anyio  # only now: see `_serve`

        return anyio.run(_serve, store, host_settings(args), early)
    finally:
        store.close()


async def _serve(store: EventStore, settings: dict[str, Any], early: EarlyStart) -> int:
    # Imported here, after `initialize` may have been answered (early.py): together
    # with asyncio and anyio these are most of the ~150 ms an editor would wait for it.
    import anyio

    from askbridge.host.host import Host
    from askbridge.jsonrpc import lsp_connection
    from askbridge.stdio import join_copiers, open_stdio

    from .server import LspServer

    # Everything allocated so far (modules, classes, pydantic schemas: ~100,000 objects)
    # lives as long as the process. Frozen, the cycle collector stops rescanning it in
    # every full collection, which otherwise cost ~10% of a busy server's time.
    gc.freeze()
    reader, writer = await open_stdio()
    conn = lsp_connection(reader, writer, unread=early.unread)
    async with Host(store, **settings) as host:
        server = LspServer(host, conn, on_exit=conn.stop)
        if early.initialize is not None:  # answered already: the same state, no reply
            await server.initialize(early.initialize)
        try:
            await conn.serve()
        finally:
            server.close()
    writer.close()
    with anyio.move_on_after(5):
        await writer.wait_closed()
    join_copiers()
    return server.exit_code if server.exit_code is not None else 0
