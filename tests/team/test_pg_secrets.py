"""No password is ever printed or logged (G1, G9): a team store opened with a DSN that
holds one (checked by the server: scram-sha-256), used, and failing in every way it
can, says everything it says without it, in its errors and in any log at any level."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from askbridge.core.errors import StoreError
from askbridge.host.log import events as ev
from askbridge.host.store.store_open import open_store
from askbridge.host.store.store_postgres import PostgresEventStore
from postgres import PASSWORD, PASSWORD_ROLE, Database
from session_headers import header


async def test_G1_no_password_in_any_message_or_log_line(
    pg_database: Database, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    url = pg_database.password_url()
    said: list[str] = []
    store = await open_store(tmp_path / "data", url)  # G1: a postgresql:// URL is the team store
    assert isinstance(store, PostgresEventStore)
    try:
        await store.create_session(header("s1"))
        await store.append("s1", [ev.turn_start("t1", "prompt")])
        said.append(store.where)
        pg_database.terminate_store_connections()  # a reconnect, with the password again
        assert len(await store.load("s1")) == 2
        with pytest.raises(ValueError) as exists:
            await store.create_session(header("s1"))
        said.append(str(exists.value))
    finally:
        await store.close()
    failing = {
        "wrong password": url.replace(PASSWORD, PASSWORD[:-1]),
        "no such database": url.replace(f"/{pg_database.name}?", "/nope?"),
        "no server": url.replace(pg_database.server.socket_dir, str(tmp_path)),
        "bad words": f"host={pg_database.server.socket_dir} password={PASSWORD} dbname",
        "a bare password": f"host={pg_database.server.socket_dir} {PASSWORD}",
    }
    for why, bad in failing.items():
        with pytest.raises(StoreError) as caught:
            store = await PostgresEventStore.open(bad, unavailable_after=0.3)
        said.append(f"{why}: {caught.value.message}")
    assert f"postgresql://{PASSWORD_ROLE}@/" in said[0]
    assert any("password authentication failed" in line for line in said)
    text = "\n".join(said) + "\n" + caplog.text
    assert PASSWORD not in text
    assert PASSWORD[:-1] not in text  # the wrong one neither
