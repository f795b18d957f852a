"""A data directory's committed logs, read the way any reader reads a store: through its
async API (host/store/store_api.py), read-only, while a host may still hold the directory.

An async test awaits `load_log`; a synchronous one (the editor tests, which drive
real processes and wait on them) calls `read_log` or `read_logs`, which run the
read in an event loop of their own.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from askbridge.host.store.datadir import open_store_read_only

Event = dict[str, Any]


async def load_log(data_dir: Path, session_id: str) -> list[Event]:
    store = open_store_read_only(data_dir)
    try:
        return await store.load(session_id)
    finally:
        await store.close()


async def load_logs(data_dir: Path) -> dict[str, list[Event]]:
    """Every session's log, by session id."""
    store = open_store_read_only(data_dir)
    try:
        return {
            info.session_id: await store.load(info.session_id)
            for info in await store.list_sessions()
        }
    finally:
        await store.close()


def read_log(data_dir: Path, session_id: str) -> list[Event]:
    return asyncio.run(load_log(data_dir, session_id))


def read_logs(data_dir: Path) -> dict[str, list[Event]]:
    return asyncio.run(load_logs(data_dir))
