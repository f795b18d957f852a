"""A session's load decodes only the bodies its folds read (store/event_rows.py), and an
existing data directory gets the columns that needs (schema version 3).

`load_lazily` must give the folds exactly the events `load` gives, whatever they read
(D2: nothing stored is changed or lost on the way); a damaged body stays StoreDamaged
naming the event (S6): at load when it is damaged then, when it is first read if it
was damaged after; a store written by the previous release
(version 2, spelled out below) opens with every row's columns filled, and loads the
same sessions into the same folds.
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from store_helpers import header as store_header

from askbridge.host.host import Host
from askbridge.host.log import events as ev
from askbridge.host.log.inbox import Inbox
from askbridge.host.log.projection import Projection
from askbridge.host.store.datadir import DB_FILE_NAME, open_store
from askbridge.host.store.event_rows import LazyEvent, columns
from askbridge.host.store.store_api import EventStore, StoreDamaged
from askbridge.host.store.store_memory import MemoryEventStore
from askbridge.host.store.store_sqlite import SCHEMA_VERSION

ASK = "ask_user_question"
TIMED_TOOLS = [
    {"name": "read", "description": "", "parameters": {"type": "object"}},
    {
        "name": ASK,
        "description": "Ask the user.",
        "parameters": {"type": "object", "properties": {"questions": {}, "timeout": {}}},
    },
]
QUESTION = {"id": "name", "question": "Project name?"}
ANSWERS = [{"id": "name", "selected": [], "custom": "askbridge"}]


def header(session_id: str) -> ev.Event:
    """A root session a Host can load (its script model has no steps to run)."""
    return store_header(session_id, model={"kind": "script", "steps": []})


def a_log() -> list[ev.Event]:
    """Every kind of event, with asks in each state a load must rebuild (P1-P7, L2)."""
    return [
        ev.turn_start("t1", "prompt"),
        ev.request_header(TIMED_TOOLS),
        ev.assistant_message("reading", [{"id": "r1", "name": "read", "arguments": {}}]),
        ev.tool_call("r1", "read", {"path": "a.py"}),
        ev.tool_result("r1", "read", "print('hi')\n" * 40),
        ev.tool_call("c1", ASK, {"questions": [QUESTION]}),
        ev.tool_result("c1", ASK, '{"pending":true}', outcome=ev.OUTCOME_PENDING),
        ev.tool_call("c2", ASK, {"questions": [QUESTION]}),
        ev.tool_result("c2", ASK, "answered", outcome=ev.OUTCOME_ANSWERED, answers=ANSWERS),
        ev.tool_call("c3", ASK, {"questions": [QUESTION]}),
        ev.tool_call("c\\4\u00e9", "read", {}),  # an id the head cannot hold: decoded instead
        ev.assistant_message("", []),
        ev.turn_end("t1", "end_turn"),
        ev.inbox_inserted("i1", "next-turn", ev.text_content("late"), ev.reply_source("c1")),
        ev.turn_start("t2", "inbox"),
        ev.inbox_claimed("i1"),
        ev.user_message(
            ev.text_content(json.dumps({"answers": ANSWERS})),
            source=ev.reply_source("c1"),
            inbox_id="i1",
        ),
        ev.user_message(ev.text_content("and then?")),
        ev.tool_call("c5", ASK, {"questions": [QUESTION]}),
        ev.tool_result("c5", ASK, '{"pending":true}', outcome=ev.OUTCOME_PENDING),
        # A late reply as logged since replies carry their batch typed (P4): a lazy event
        # whose `answers` the fold reads from its body.
        ev.user_message(
            ev.text_content("rendered once, never read back"),
            source=ev.reply_source("c5"),
            answers=ANSWERS,
        ),
        {"n": 1, "type": "x/untyped-first"},  # a body that does not start with its type
    ]


async def written(data_dir: Path, events: list[ev.Event]) -> EventStore:
    store = open_store(data_dir)
    await store.create_session(header("s1"))
    await store.append("s1", events)
    return store


async def test_D2_lazily_loaded_events_are_the_stored_events(tmp_path: Path) -> None:
    store = await written(tmp_path / "data", a_log())
    try:
        plain = await store.load("s1")
        lazy = await store.load_lazily("s1")
        assert sum(type(event) is LazyEvent for event in lazy) == 12  # 2 more: c5 and its reply
        assert [event.get("type") for event in lazy] == [event["type"] for event in plain]
        assert lazy == plain and plain == lazy  # a whole-event read decodes (both sides)
        assert not any(isinstance(event, LazyEvent) and event._read for event in lazy)
        for fresh, event in zip(await store.load_lazily("s1"), plain, strict=True):
            assert json.dumps(fresh) == json.dumps(event)  # same keys, same order
        for fresh, event in zip(await store.load_lazily("s1"), plain, strict=True):
            assert dict(fresh) == event and list(fresh.items()) == list(event.items())
    finally:
        await store.close()


async def test_P1_P7_L2_folds_over_a_lazy_load_equal_folds_over_the_whole_log(
    tmp_path: Path,
) -> None:
    """What a loaded session keeps (S10) is the same from either load: the view, the inbox,
    the calls without a result and the open turn (P7), the counters and the last text."""
    store = await written(tmp_path / "data", a_log())
    memory = MemoryEventStore()
    await memory.create_session(header("s1"))
    await memory.append("s1", a_log())

    async def folded(source: EventStore) -> tuple[Any, ...]:
        async with Host(source) as host:
            session = await host.load_session("s1")
            return (
                session.projection.view_dict(),
                list(session.inbox.items.values()),
                session.open_calls,
                session.open_turn,
                session.turns,
                session.request_index,
                session.last_text,
                (await source.load("s1"))[len(a_log()) + 1 :],  # P7's repairs
            )

    try:
        lazy_state = await folded(store)
        plain_state = await folded(memory)
        assert lazy_state == plain_state
        view, _, open_calls, open_turn, *_ = lazy_state
        assert [entry["callId"] for entry in view["active"]] == ["c3"]
        assert [entry["callId"] for entry in view["settled"]] == ["c2", "c1", "c5"]
        assert open_calls == {} and open_turn is None  # repaired on the first load
        events = await store.load_lazily("s1")
        assert Projection(events).view_dict() == Projection(await store.load("s1")).view_dict()
        inbox = Inbox()
        inbox.apply(await store.load_lazily("s1"))
        assert len(inbox) == 0
    finally:
        await store.close()


async def test_S6_a_damaged_lazy_body_is_store_damaged_at_load_or_when_first_read(
    tmp_path: Path,
) -> None:
    """The folds' keys come from the columns; any other read reads the body, and a bad
    one is named as `load` names it. An eager body is checked at once."""
    store = await written(tmp_path / "data", a_log())
    db = tmp_path / "data" / DB_FILE_NAME
    try:
        events = await store.load_lazily("s1")
        with sqlite3.connect(db, isolation_level=None) as conn:
            conn.execute("UPDATE events SET body = '[' WHERE session_id = 's1' AND seq = 4")
        conn.close()
        call = events[4]
        assert (call.get("type"), call.get("callId"), call["name"]) == (ev.TOOL_CALL, "r1", "read")
        message = f"{db} is damaged: session 's1': event 4 is not a JSON object"
        with pytest.raises(StoreDamaged) as caught:
            call.get("arguments")
        assert str(caught.value) == message
        with pytest.raises(StoreDamaged):
            len(call)  # still damaged, every time
        with pytest.raises(StoreDamaged, match="event 4 is not a JSON object"):
            await store.load("s1")
        with pytest.raises(StoreDamaged, match="event 4 is not a JSON object"):
            await store.load_lazily("s1")  # damaged before the load: S6 at load, as `load`
        with sqlite3.connect(db, isolation_level=None) as conn:
            conn.execute("UPDATE events SET body = 'null' WHERE session_id = 's1' AND seq = 2")
        conn.close()
        with pytest.raises(StoreDamaged, match="'s1': event 2 is not a JSON object"):
            await store.load_lazily("s1")  # a request/header: decoded at load
    finally:
        await store.close()


leading_values = st.one_of(
    st.text(max_size=6), st.none(), st.integers(), st.lists(st.text(max_size=2), max_size=2)
)


@settings(max_examples=40, deadline=None)
@given(
    kind=st.sampled_from([ev.TOOL_CALL, ev.TOOL_RESULT, ev.USER_MESSAGE, ev.TURN_END, "x"]),
    call_id=leading_values,
    name=leading_values,
    rest=st.dictionaries(st.sampled_from(["content", "arguments", "name"]), leading_values),
)
async def test_D2_columns_never_say_what_the_body_does_not(
    kind: str, call_id: Any, name: Any, rest: dict[str, Any]
) -> None:
    """Whatever the leading keys hold (escapes, non-strings, absent), a lazy event reads
    each key as the decoded body does."""
    event = {"type": kind, "callId": call_id, **rest}
    if name is not None:
        event = {"type": kind, "callId": call_id, "name": name, **rest}
    text = json.dumps(event, separators=(",", ":"), ensure_ascii=False)
    kind_column, head = columns(text)
    assert kind_column == kind
    assert head is not None
    for key, value in zip(("type", "callId", "name"), json.loads(head), strict=True):
        assert value is None or event[key] == value
    with tempfile.TemporaryDirectory() as directory:
        store = await written(Path(directory) / "data", [event])
        try:
            for key in ("type", "callId", "name", "content", "nope"):
                assert (await store.load_lazily("s1"))[1].get(key) == event.get(key)
                assert (key in (await store.load_lazily("s1"))[1]) == (key in event)
            assert await store.load_lazily("s1") == [header("s1"), event]
        finally:
            await store.close()


# The previous release's schema (version 2), spelled out here on purpose: this test must
# keep describing it after sqlite_schema.py moves on.
V2_SCHEMA = """
CREATE TABLE schema_version (version INTEGER NOT NULL);
INSERT INTO schema_version VALUES (2);
CREATE TABLE sessions (id TEXT PRIMARY KEY, created_at TEXT NOT NULL,
    origin TEXT NOT NULL, parent_session_id TEXT, title TEXT);
CREATE TABLE events (session_id TEXT NOT NULL REFERENCES sessions(id),
    seq INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (session_id, seq));
CREATE INDEX sessions_by_created_at ON sessions (created_at);
"""


async def test_a_version_2_data_directory_opens_with_every_row_given_its_columns(
    tmp_path: Path,
) -> None:
    """An existing store (more rows than one migration slice, a damaged body among them)
    is migrated on open; its sessions load whole and lazily as before, and new writes
    fill the columns too. Nothing stored is changed (D2)."""
    data_dir = tmp_path / "data"
    data_dir.mkdir(mode=0o700)
    log = a_log() * 120  # 2,280 events: the migration reads them in slices
    with sqlite3.connect(data_dir / DB_FILE_NAME, isolation_level=None) as conn:
        conn.executescript(V2_SCHEMA)
        for sid in ("s1", "s2"):
            first = header(sid)
            conn.execute(
                "INSERT INTO sessions VALUES (?, ?, 'root', NULL, NULL)", (sid, first["createdAt"])
            )
            bodies = [json.dumps(e, separators=(",", ":")) for e in [first, *log]]
            conn.executemany(
                "INSERT INTO events VALUES (?, ?, ?)", [(sid, i, b) for i, b in enumerate(bodies)]
            )
        conn.execute("UPDATE events SET body = 'null' WHERE session_id = 's2' AND seq = 7")
        stored = conn.execute("SELECT session_id, seq, body FROM events ORDER BY rowid").fetchall()
    conn.close()

    store = open_store(data_dir)
    try:
        assert await store.load("s1") == await store.load_lazily("s1") == [header("s1"), *log]
        with pytest.raises(StoreDamaged, match="'s2': event 7 is not a JSON object"):
            await store.load_lazily("s2")
        await store.append("s1", [ev.turn_end("t9", "end_turn")])
        assert (await store.load_lazily("s1"))[-1] == ev.turn_end("t9", "end_turn")
    finally:
        await store.close()
    with sqlite3.connect(data_dir / DB_FILE_NAME, isolation_level=None) as conn:
        (version,) = conn.execute("SELECT version FROM schema_version").fetchone()
        rows = conn.execute("SELECT session_id, seq, body, type, head FROM events ORDER BY rowid")
        migrated = rows.fetchall()
    conn.close()
    assert version == SCHEMA_VERSION == 3
    assert [row[:3] for row in migrated[: len(stored)]] == stored  # bodies untouched
    assert all((kind, head) == columns(body) for _, _, body, kind, head in migrated)
    assert migrated[4][3:] == (ev.TOOL_CALL, '["tool/call","r1","read"]')
    assert migrated[-2][3:] == (None, None)  # {"n": 1, "type": ...}: decoded at each load
    assert sum(kind is None for *_, kind, _ in migrated) == 2 * 120 + 1  # those, and s2's null
