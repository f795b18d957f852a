"""The session header the store tests write: fixed, boring fields, one definition for the
SQLite, PostgreSQL and fault tests alike."""

from __future__ import annotations

from typing import Any

from askbridge.host.log import events as ev


def header(
    session_id: str,
    model: dict[str, Any] | None = None,
    ask: dict[str, Any] | None = None,
    **extra: str,
) -> ev.Event:
    """A root session's header (a Host can load it with `model={"kind": "script",
    "steps": []}`); `ask`: its ask_user_question settings, legacy by default."""
    return ev.session_header(
        session_id=session_id,
        agent_id="agent",
        origin="root",
        cwd="/w",
        model=model or {"kind": "script"},
        ask_user_question=ask or {"mode": "legacy"},
        created_at="2025-01-01T00:00:00Z",
        **extra,
    )
