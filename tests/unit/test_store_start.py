"""Opening a data directory in two steps: held and checked (`open_checked`, before an
inline host's first answer), then the store built on it (`CheckedStore.store`).

The checks themselves (S5 privacy, S6 identity and damage, H3's lock) are the same as
`open_store`'s, which is the two steps in one (test_store_datadir.py,
test_datadir_private.py, test_store_damage.py and tests/e2e cover them).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from askbridge.host.log import events as ev
from askbridge.host.store.datadir import open_checked, open_store
from askbridge.host.store.sqlite_open import SCHEMA_VERSION
from askbridge.host.store.sqlite_schema import MIGRATIONS
from askbridge.host.store.store_api import StoreError


def test_the_schema_version_checked_at_start_counts_the_migrations() -> None:
    # sqlite_open.py checks a file's version without importing the migrations.
    assert len(MIGRATIONS) == SCHEMA_VERSION


async def test_H3_a_checked_directory_is_held_until_closed(tmp_path: Path) -> None:
    checked = open_checked(tmp_path)
    with pytest.raises(StoreError, match="is in use by process"):
        open_checked(tmp_path)
    checked.close()
    open_checked(tmp_path).close()


async def test_the_store_is_built_on_the_checked_connection_and_its_close_unlocks(
    tmp_path: Path,
) -> None:
    header = ev.session_header(
        session_id="s",
        agent_id="a",
        origin="root",
        cwd="/",
        model={},
        ask_user_question={},
        created_at="2025-01-01T00:00:00Z",
    )
    store = open_checked(tmp_path).store()
    await store.create_session(header)
    await store.close()
    again = open_store(tmp_path)
    try:
        assert [info.session_id for info in await again.list_sessions()] == ["s"]
    finally:
        await again.close()
