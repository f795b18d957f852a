"""An EventStore that lives in memory, for fast unit tests of the host.

It keeps the same contract as the SQLite store (see store_api.py): events are
kept as their JSON text (`encode_event`), so an event that cannot be stored is
refused with the same StoreError before anything is appended, and `load` hands
out fresh dicts a caller may mutate freely. Its coroutines never await: every
call is done when it returns (store_api.py). It cannot be damaged or lost, so it
never raises StoreDamaged or StoreLost. Nothing survives the process; use
`SQLiteEventStore` wherever durability matters.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ..log.events import Event
from .store_api import SessionInfo, StoreError, encode_event, session_info_from_header


class MemoryEventStore:
    def __init__(self) -> None:
        # Insertion order of the dicts is creation order, the tie-break of list_sessions.
        self._sessions: dict[str, SessionInfo] = {}
        self._events: dict[str, list[str]] = {}
        self._closed = False

    async def create_session(self, header: Event) -> None:
        self._check_open()
        info = session_info_from_header(header)
        if info.session_id in self._sessions:
            raise ValueError(f"session {info.session_id!r} already exists")
        text = encode_event(header)
        self._sessions[info.session_id] = info
        self._events[info.session_id] = [text]

    async def append(self, session_id: str, events: Sequence[Event]) -> None:
        self._check_open()
        log = self._log(session_id)
        # Encode everything first: one bad event means none of the batch is kept.
        texts = [encode_event(event) for event in events]
        log.extend(texts)

    async def append_encoded(self, batches: Sequence[tuple[str, Sequence[str]]]) -> None:
        self._check_open()
        logs = [self._log(session_id) for session_id, _ in batches]  # KeyError: none kept
        for log, (_, texts) in zip(logs, batches, strict=True):
            log.extend(texts)

    async def load(self, session_id: str) -> list[Event]:
        self._check_open()
        return [json.loads(text) for text in self._log(session_id)]

    async def load_lazily(self, session_id: str) -> list[Event]:
        return await self.load(session_id)  # what there is to save is the disk's: nothing here

    async def exists(self, session_id: str) -> bool:
        self._check_open()
        return session_id in self._sessions

    async def list_sessions(self) -> list[SessionInfo]:
        self._check_open()
        # sorted() is stable, so equal timestamps keep creation order.
        return sorted(self._sessions.values(), key=lambda info: info.created_at)

    def check_not_lost(self) -> None:
        self._check_open()  # memory cannot be deleted from under us

    async def close(self) -> None:
        self._closed = True

    def _log(self, session_id: str) -> list[str]:
        try:
            return self._events[session_id]
        except KeyError:
            raise KeyError(session_id) from None

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError("the in-memory event store is closed")
