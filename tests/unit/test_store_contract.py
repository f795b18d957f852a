"""The EventStore contract (store_api.py), run against both stores.

Every test here gets a factory for a fresh store, once for the in-memory store
and once for the SQLite store opened through `open_store` on a real temp
directory, so the fast store used by host unit tests cannot drift from the
durable one. Durability across processes is in test_store_sqlite.py and
tests/faults/test_store_crash.py.
"""

from __future__ import annotations

import itertools
import math
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from askbridge.host.log import events as ev
from askbridge.host.store.datadir import open_store
from askbridge.host.store.store_api import EventStore, StoreError
from askbridge.host.store.store_memory import MemoryEventStore

StoreFactory = Callable[[], EventStore]


def header(session_id: str, created_at: str = "2025-01-01T00:00:00Z", **extra: Any) -> ev.Event:
    return ev.session_header(
        session_id=session_id,
        agent_id=f"agent-{session_id}",
        origin=extra.pop("origin", "root"),
        cwd="/tmp/project",
        model={"kind": "script", "path": "/tmp/m.json"},
        ask_user_question={"mode": "timed", "timeout": 60},
        created_at=created_at,
        **extra,
    )


def make_store(kind: str, directory: Path) -> EventStore:
    if kind == "memory":
        return MemoryEventStore()
    return open_store(directory)


@pytest.fixture(params=["memory", "sqlite"])
async def new_store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[StoreFactory]:
    opened: list[EventStore] = []
    counter = itertools.count()

    def factory() -> EventStore:
        store = make_store(request.param, tmp_path / f"data{next(counter)}")
        opened.append(store)
        return store

    yield factory
    for store in opened:
        await store.close()


async def test_new_session_loads_as_its_header(new_store: StoreFactory) -> None:
    store = new_store()
    first = header("s1", title="Fix the build")
    await store.create_session(first)
    assert await store.exists("s1")
    assert not await store.exists("s2")
    assert await store.load("s1") == [first]


async def test_D1_appended_events_load_in_order_across_batches(new_store: StoreFactory) -> None:
    """D1/D2: batches are appended whole and `load` returns every event in order."""
    store = new_store()
    await store.create_session(header("s1"))
    turn = [ev.turn_start("t1", "prompt"), ev.assistant_message("hi", [])]
    tools = [ev.tool_call("c1", "read", {"path": "a"}), ev.tool_result("c1", "read", "body")]
    await store.append("s1", turn)
    await store.append("s1", [])
    await store.append("s1", tools)
    await store.append("s1", [ev.turn_end("t1", "end_turn")])
    assert (await store.load("s1"))[1:] == [*turn, *tools, ev.turn_end("t1", "end_turn")]


async def test_sessions_keep_separate_logs(new_store: StoreFactory) -> None:
    store = new_store()
    await store.create_session(header("a"))
    await store.create_session(header("b"))
    for n in range(5):
        await store.append("a", [ev.turn_start(f"a{n}", "prompt")])
        await store.append("b", [ev.turn_start(f"b{n}", "inbox")])
    assert [e["turnId"] for e in (await store.load("a"))[1:]] == [f"a{n}" for n in range(5)]
    assert [e["turnId"] for e in (await store.load("b"))[1:]] == [f"b{n}" for n in range(5)]


async def test_unknown_session_is_a_key_error(new_store: StoreFactory) -> None:
    store = new_store()
    with pytest.raises(KeyError):
        await store.load("nope")
    with pytest.raises(KeyError):
        await store.append("nope", [ev.turn_start("t", "prompt")])
    with pytest.raises(KeyError):
        await store.append("nope", [])
    assert not await store.exists("nope")
    assert await store.list_sessions() == []


async def test_creating_an_existing_session_is_refused_and_keeps_the_log(
    new_store: StoreFactory,
) -> None:
    store = new_store()
    await store.create_session(header("s1"))
    await store.append("s1", [ev.turn_start("t1", "prompt")])
    with pytest.raises(ValueError, match="already exists"):
        await store.create_session(header("s1", created_at="2030-01-01T00:00:00Z"))
    assert await store.load("s1") == [header("s1"), ev.turn_start("t1", "prompt")]
    assert len(await store.list_sessions()) == 1


@pytest.mark.parametrize(
    "bad_header",
    [
        ev.turn_start("t1", "prompt"),
        {"type": ev.SESSION_HEADER, "createdAt": "2025", "origin": "root"},
        {"type": ev.SESSION_HEADER, "sessionId": "s", "origin": "root"},
        {"type": ev.SESSION_HEADER, "sessionId": 7, "createdAt": "2025", "origin": "root"},
    ],
)
async def test_a_session_must_start_with_a_complete_header(
    new_store: StoreFactory, bad_header: ev.Event
) -> None:
    store = new_store()
    with pytest.raises(ValueError):
        await store.create_session(bad_header)
    assert await store.list_sessions() == []


def _nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("bad_event", "where"),
    [
        ({"type": "x", "value": {1, 2}}, "value holds a set"),
        ({"type": "x", "value": object()}, "value holds a object"),
        ({"type": "x", "value": math.nan}, "value holds nan"),
        ({"type": "x", "a": {"b": [1, -math.inf]}}, "a.b[1] holds -inf"),
        (
            {"type": "tool/call", "arguments": {"questions": [{"question": "x\ud800y"}]}},
            r"arguments.questions[0].question holds a lone surrogate (U+D800)",
        ),
        ({"type": "x", "ok": "\udc80"}, "ok holds a lone surrogate (U+DC80)"),
        ({"type": "x", "m": {"k\udfff": 1}}, r"m has the key 'k\udfff'"),
        ({"type": "x", "m": {(1, 2): 1}}, "m has the key '(1, 2)'"),
        ({"type": "x", "deep": _nested(100_000)}, "deep[0][0][0][0][0][0][0]… nests deeper than"),
    ],
)
async def test_S4_D2_an_event_that_cannot_be_stored_is_one_store_error_and_writes_nothing(
    new_store: StoreFactory, bad_event: ev.Event, where: str
) -> None:
    """S3/S4/D2: a batch is all or nothing, also when one of its events cannot be stored;
    the refusal is one StoreError (STORE_ERROR) saying which key holds what, and its
    message can itself be stored and sent (no lone surrogate in it)."""
    store = new_store()
    await store.create_session(header("s1"))
    batch = [ev.turn_start("t1", "prompt"), bad_event]
    with pytest.raises(StoreError) as caught:
        await store.append("s1", batch)
    assert caught.value.code == "STORE_ERROR"
    assert str(caught.value).startswith(f"cannot store a {bad_event['type']} event: {where}")
    str(caught.value).encode("utf-8")  # printable, sendable
    assert await store.load("s1") == [header("s1")]
    with pytest.raises(StoreError, match="holds nan"):
        await store.create_session({**header("s2"), "title": math.nan})
    assert [info.session_id for info in await store.list_sessions()] == ["s1"]
    await store.append("s1", [ev.turn_end("t1", "end_turn")])  # the store is still usable
    assert (await store.load("s1"))[1:] == [ev.turn_end("t1", "end_turn")]


async def test_loaded_events_are_fresh_copies(new_store: StoreFactory) -> None:
    store = new_store()
    first = header("s1")
    await store.create_session(first)
    appended = ev.tool_call("c1", "read", {"path": "a"})
    await store.append("s1", [appended])
    appended["arguments"]["path"] = "changed after append"
    first["cwd"] = "changed after create"
    loaded = await store.load("s1")
    loaded[1]["arguments"]["path"] = "changed after load"
    again = await store.load("s1")
    assert again[0]["cwd"] == "/tmp/project"
    assert again[1]["arguments"] == {"path": "a"}


async def test_list_sessions_oldest_first_with_header_fields(new_store: StoreFactory) -> None:
    store = new_store()
    await store.create_session(header("late", "2025-03-01T00:00:00Z", title="Late"))
    await store.create_session(
        header(
            "child",
            "2025-01-01T00:00:00Z",
            origin="subagent",
            parent_session_id="late",
            parent_agent_id="agent-late",
        )
    )
    # Same timestamp as `child`: creation order breaks the tie.
    await store.create_session(header("twin", "2025-01-01T00:00:00Z"))
    infos = await store.list_sessions()
    assert [i.session_id for i in infos] == ["child", "twin", "late"]
    child, _, late = infos
    assert (child.origin, child.parent_session_id, child.title) == ("subagent", "late", None)
    assert (late.origin, late.title, late.created_at) == ("root", "Late", "2025-03-01T00:00:00Z")


async def test_a_closed_store_refuses_every_call(new_store: StoreFactory) -> None:
    store = new_store()
    await store.create_session(header("s1"))
    store.check_not_lost()  # an open store in a present directory is not lost
    await store.close()
    await store.close()  # closing twice is harmless
    calls: list[Callable[[], Awaitable[object]]] = [
        lambda: store.load("s1"),
        lambda: store.append("s1", []),
        lambda: store.exists("s1"),
        lambda: store.list_sessions(),
        lambda: store.create_session(header("s2")),
    ]
    for call in calls:
        with pytest.raises(StoreError, match="closed"):
            await call()
    with pytest.raises(StoreError, match="closed"):
        store.check_not_lost()


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
json_events = st.dictionaries(st.text(max_size=8), json_values, max_size=5).map(
    lambda body: {**body, "type": "test/any"}
)


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
@settings(max_examples=25, deadline=None)
@given(batches=st.lists(st.lists(json_events, max_size=5), max_size=6))
async def test_D2_any_json_events_round_trip_exactly(
    kind: str, batches: list[list[ev.Event]]
) -> None:
    """D2: what `load` returns is exactly what was appended — text, numbers, nesting."""
    with tempfile.TemporaryDirectory() as directory:
        store = make_store(kind, Path(directory))
        try:
            await store.create_session(header("s1"))
            for batch in batches:
                await store.append("s1", batch)
            assert (await store.load("s1"))[1:] == [event for batch in batches for event in batch]
        finally:
            await store.close()
