"""Fresh stores for tests that run against both the SQLite and the team store.

`Awaited(store)` shows a store through the async EventStore API (store_api.py):
a method that still answers synchronously is awaited as if it had not. Once every
store is async it passes each call through unchanged, and the factory below can
move into tests/unit's contract tests beside the memory store.
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from askbridge.host.store.datadir import open_store
from askbridge.host.store.store_postgres import PostgresEventStore

StoreFactory = Callable[[], Awaitable[Any]]
STORE_KINDS = ["sqlite", "postgres"]


class Awaited:
    """`store`, every method but `check_not_lost` awaitable."""

    def __init__(self, store: Any) -> None:
        self._store = store

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._store, name)
        if name == "check_not_lost" or not callable(attr):
            return attr

        async def call(*args: Any, **kwargs: Any) -> Any:
            result = attr(*args, **kwargs)
            return await result if inspect.isawaitable(result) else result

        return call


def opener(
    kind: str, request: pytest.FixtureRequest, directory: Path
) -> Callable[[], Awaitable[Any]]:
    """What opens one new, empty store of `kind` for the data directory `directory`, and
    opens it again after each close."""
    if kind == "sqlite":

        async def sqlite() -> Any:
            return Awaited(open_store(directory))

        return sqlite
    server = request.getfixturevalue("pg_server")
    url = server.url(server.new_database())

    async def postgres() -> Any:
        return await PostgresEventStore.open(url, str(directory))

    return postgres


@pytest.fixture(params=STORE_KINDS)
async def new_store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[StoreFactory]:
    """A factory of fresh stores, SQLite and PostgreSQL in turn; all closed at the end."""
    opened: list[Any] = []
    counter = itertools.count()

    async def factory() -> Any:
        store = await opener(request.param, request, tmp_path / f"data{next(counter)}")()
        opened.append(store)
        return store

    yield factory
    for store in opened:
        await store.close()
