"""The EventStore contract (store_api.py) on the team store, beside the SQLite store.

The cases of tests/unit/test_store_contract.py, each run on a fresh SQLite store and
a fresh PostgreSQL one (a database of its own on the worker's server,
tests/postgres.py), through the async API: what a host sees must not depend on
which store it runs on (G1-G3, D1, D2, S3, S4, S6).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_factories import STORE_KINDS, StoreFactory, opener

from askbridge.host.log import events as ev
from askbridge.host.store.store_api import StoreError


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


async def test_new_session_loads_as_its_header(new_store: StoreFactory) -> None:
    store = await new_store()
    first = header("s1", title="Fix the build")
    await store.create_session(first)
    assert await store.exists("s1")
    assert not await store.exists("s2")
    assert await store.load("s1") == [first]
    assert await store.load_lazily("s1") == [first]


async def test_D1_appended_events_load_in_order_across_batches(new_store: StoreFactory) -> None:
    store = await new_store()
    await store.create_session(header("s1"))
    turn = [ev.turn_start("t1", "prompt"), ev.assistant_message("hi", [])]
    tools = [ev.tool_call("c1", "read", {"path": "a"}), ev.tool_result("c1", "read", "body")]
    await store.append("s1", turn)
    await store.append("s1", [])
    await store.append("s1", tools)
    await store.append("s1", [ev.turn_end("t1", "end_turn")])
    expected = [*turn, *tools, ev.turn_end("t1", "end_turn")]
    assert (await store.load("s1"))[1:] == expected
    assert (await store.load_lazily("s1"))[1:] == expected


async def test_D1_one_group_commit_appends_to_several_sessions(new_store: StoreFactory) -> None:
    store = await new_store()
    for name in ("b", "a", "c"):
        await store.create_session(header(name))
    await store.append_encoded(
        [
            ("c", ['{"type":"x","n":1}']),
            ("a", ['{"type":"x","n":2}', '{"type":"x","n":3}']),
            ("b", []),
            ("c", ['{"type":"x","n":4}']),  # named twice: its events in the order given
        ]
    )
    assert [e["n"] for e in (await store.load("a"))[1:]] == [2, 3]
    assert (await store.load("b"))[1:] == []
    assert [e["n"] for e in (await store.load("c"))[1:]] == [1, 4]


async def test_sessions_keep_separate_logs(new_store: StoreFactory) -> None:
    store = await new_store()
    await store.create_session(header("a"))
    await store.create_session(header("b"))
    for n in range(5):
        await store.append("a", [ev.turn_start(f"a{n}", "prompt")])
        await store.append("b", [ev.turn_start(f"b{n}", "inbox")])
    assert [e["turnId"] for e in (await store.load("a"))[1:]] == [f"a{n}" for n in range(5)]
    assert [e["turnId"] for e in (await store.load("b"))[1:]] == [f"b{n}" for n in range(5)]


async def test_unknown_session_is_a_key_error(new_store: StoreFactory) -> None:
    store = await new_store()
    await store.create_session(header("s1"))
    with pytest.raises(KeyError):
        await store.load("nope")
    with pytest.raises(KeyError):
        await store.load_lazily("nope")
    with pytest.raises(KeyError):
        await store.append("nope", [ev.turn_start("t", "prompt")])
    with pytest.raises(KeyError):
        await store.append("nope", [])
    with pytest.raises(KeyError):  # one unknown session: nothing of the commit is written
        await store.append_encoded([("s1", ['{"type":"x"}']), ("nope", ['{"type":"x"}'])])
    assert await store.load("s1") == [header("s1")]
    assert not await store.exists("nope")
    assert [info.session_id for info in await store.list_sessions()] == ["s1"]


async def test_creating_an_existing_session_is_refused_and_keeps_the_log(
    new_store: StoreFactory,
) -> None:
    store = await new_store()
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
    store = await new_store()
    with pytest.raises(ValueError):
        await store.create_session(bad_header)
    assert await store.list_sessions() == []


@pytest.mark.parametrize(
    ("bad_event", "where"),
    [
        ({"type": "x", "value": {1, 2}}, "value holds a set"),
        ({"type": "x", "value": math.nan}, "value holds nan"),
        (
            {"type": "tool/call", "arguments": {"questions": [{"question": "x\ud800y"}]}},
            r"arguments.questions[0].question holds a lone surrogate (U+D800)",
        ),
        ({"type": "x", "m": {(1, 2): 1}}, "m has the key '(1, 2)'"),
    ],
)
async def test_S4_D2_an_event_that_cannot_be_stored_is_one_store_error_and_writes_nothing(
    new_store: StoreFactory, bad_event: ev.Event, where: str
) -> None:
    store = await new_store()
    await store.create_session(header("s1"))
    with pytest.raises(StoreError) as caught:
        await store.append("s1", [ev.turn_start("t1", "prompt"), bad_event])
    assert caught.value.code == "STORE_ERROR"
    assert str(caught.value).startswith(f"cannot store a {bad_event['type']} event: {where}")
    assert await store.load("s1") == [header("s1")]
    with pytest.raises(StoreError, match="holds nan"):
        await store.create_session({**header("s2"), "title": math.nan})
    assert [info.session_id for info in await store.list_sessions()] == ["s1"]
    await store.append("s1", [ev.turn_end("t1", "end_turn")])  # the store is still usable
    assert (await store.load("s1"))[1:] == [ev.turn_end("t1", "end_turn")]


async def test_loaded_events_are_fresh_copies(new_store: StoreFactory) -> None:
    store = await new_store()
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
    store = await new_store()
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
    await store.create_session(header("twin", "2025-01-01T00:00:00Z"))  # ties: creation order
    infos = await store.list_sessions()
    assert [i.session_id for i in infos] == ["child", "twin", "late"]
    child, _, late = infos
    assert (child.origin, child.parent_session_id, child.title) == ("subagent", "late", None)
    assert (late.origin, late.title, late.created_at) == ("root", "Late", "2025-03-01T00:00:00Z")


async def test_a_closed_store_refuses_every_call(new_store: StoreFactory) -> None:
    store = await new_store()
    await store.create_session(header("s1"))
    store.check_not_lost()
    await store.close()
    await store.close()  # closing twice is harmless
    for call, args in [
        ("load", ("s1",)),
        ("load_lazily", ("s1",)),
        ("append", ("s1", [])),
        ("append_encoded", ([("s1", ['{"type":"x"}'])],)),
        ("exists", ("s1",)),
        ("list_sessions", ()),
        ("create_session", (header("s2"),)),
    ]:
        with pytest.raises(StoreError, match="closed"):
            await getattr(store, call)(*args)
    with pytest.raises(StoreError, match="closed"):
        store.check_not_lost()


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_D1_events_survive_close_and_reopen(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """The same store opened again by a new store object (a restarted host) has it all."""
    reopen = opener(kind, request, tmp_path / "data")
    first = await reopen()
    await first.create_session(header("s1"))
    await first.append("s1", [ev.turn_start("t1", "prompt")])
    await first.close()
    again = await reopen()
    try:
        assert await again.load("s1") == [header("s1"), ev.turn_start("t1", "prompt")]
        await again.append("s1", [ev.turn_end("t1", "end_turn")])  # numbering continues
        assert len(await again.load("s1")) == 3
    finally:
        await again.close()


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


@pytest.mark.parametrize("kind", STORE_KINDS)
def test_D2_any_json_events_round_trip_exactly(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """D2: what `load` returns is exactly what was appended — text, numbers, nesting
    (PostgreSQL's `json` keeps the text as given: escapes, key order, big integers)."""
    reopen = opener(kind, request, tmp_path / "data")
    sessions = iter(range(10**6))

    async def check(batches: list[list[ev.Event]]) -> None:
        store = await reopen()
        try:
            session_id = f"s{next(sessions)}"
            await store.create_session(header(session_id))
            for batch in batches:
                await store.append(session_id, batch)
            expected = [event for batch in batches for event in batch]
            assert (await store.load(session_id))[1:] == expected
            assert (await store.load_lazily(session_id))[1:] == expected
        finally:
            await store.close()

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(batches=st.lists(st.lists(json_events, max_size=5), max_size=6))
    def round_trip(batches: list[list[ev.Event]]) -> None:
        anyio.run(check, batches)

    round_trip()
