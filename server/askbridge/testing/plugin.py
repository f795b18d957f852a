"""The askbridge pytest plugin (entry point `askbridge`, loaded automatically once installed).

Fixture `askbridge_client`: a factory that starts `askbridge serve` in a fresh
data directory under `tmp_path` and yields an initialized `AskbridgeClient`:

    async def test_answer(askbridge_client):
        async with askbridge_client(model=SCRIPT) as client:
            client.answer_with(lambda ask: {"answers": [{"id": "db", "selected": ["SQLite"]}]})
            sid = await client.new_session()
            assert await client.prompt(sid, "go") == "end_turn"

The tests are `async def`: install `askbridge[testing]` (pytest and pytest-asyncio)
and set `asyncio_mode = "auto"` under `[tool.pytest.ini_options]` (or mark each test
`@pytest.mark.asyncio`). A server that cannot start raises `ServerStartError`.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest

from .client import AskbridgeClient


@pytest.fixture
def askbridge_client(
    tmp_path: Path,
) -> Callable[..., AbstractAsyncContextManager[AskbridgeClient]]:
    def start(**kwargs: Any) -> AbstractAsyncContextManager[AskbridgeClient]:
        kwargs.setdefault("data_dir", tmp_path / "askbridge-data")
        return AskbridgeClient.connect(**kwargs)

    return start
