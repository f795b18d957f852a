"""Script-model steps and small readers shared by the end-to-end tests.

A script model (protocol.md "ModelSpec") makes every test deterministic: each
model request takes the next step. `ask_step(...)` is a step whose tool call
is `ask_user_question`; `script(...)` wraps steps into a ModelSpec.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from askbridge.host.store.datadir import open_store_read_only
from askbridge.testing.hosts import stop_host, wait_status
from scripts import ask_call, script, text_step  # noqa: F401  (re-exported for the e2e tests)

DB_QUESTION: dict[str, Any] = {
    "id": "db",
    "question": "Which database?",
    "options": [{"label": "SQLite"}, {"label": "Postgres"}],
}
SQLITE = {"answers": [{"id": "db", "selected": ["SQLite"]}]}
POSTGRES = {"answers": [{"id": "db", "selected": ["Postgres"]}]}
ASK_CANCELLED_DATA = {"name": "UserQuestionError", "code": "ASK_CANCELLED"}
ASK_TIMED_OUT_DATA = {"name": "UserQuestionError", "code": "ASK_TIMED_OUT"}


def ask_step(
    call_id: str = "call-1",
    questions: list[dict[str, Any]] | None = None,
    timeout: int | None = None,
    text: str | None = None,
) -> dict[str, Any]:
    arguments: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
    return ask_call(call_id, questions or [DB_QUESTION], text, **arguments)


def tool_text(update: dict[str, Any]) -> str:
    """The text the model received for a `tool_call_update` (protocol.md session/update)."""
    [block] = update["content"]
    assert block["type"] == "content" and block["content"]["type"] == "text", update
    return str(block["content"]["text"])


def tool_json(update: dict[str, Any]) -> Any:
    return json.loads(tool_text(update))


async def stored_events(data_dir: Path, session_id: str) -> list[dict[str, Any]]:
    """The session's committed log, read from the real SQLite store, read-only: in auto mode
    the host may still be running (it idles out later)."""
    store = open_store_read_only(data_dir)
    try:
        return await store.load(session_id)
    finally:
        await store.close()


def of_type(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e.get("type") == kind]


@contextmanager
def running_host(data: Path) -> Iterator[subprocess.Popen[bytes]]:
    """`askbridge host` on `data`, started by hand and serving; stopped and waited for after."""
    host = subprocess.Popen(
        [sys.executable, "-m", "askbridge.cli", "host", "--data-dir", str(data)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_status(data)
        yield host
    finally:
        stop_host(data)
        host.wait(10)
