"""How fast a long session loads from the SQLite store (what `session/load` pays).

Writes one session of 100,000 mixed, realistic events into a temporary data
directory (in batches, as the host does), then times `Host.load_session` —
reading the store, P7's repair check, the folds a loaded session keeps (the
projection, the inbox, its counters) — in a fresh Host each time, against a
baseline measured in the same run: plain `json.loads` of the same 100,000
event JSON strings, i.e. the decoding work alone with no database. Each is
timed best-of-5 in this process's CPU time (`time.process_time`): both are
CPU-bound in one thread (the database was just written, so it is in the page
cache), and on a shared machine wall time mostly measures the neighbours (a
0.25 s load took 0.5-0.8 s of wall time beside a load average of 8). Target (f): ratio ≤ 0.5: a load must not decode
every event. It does not: `load_lazily` (host/store/event_rows.py) reads the
calls, user messages and turn ends of this mix as their `head` column and
leaves their bodies undecoded, since no fold reads them. Prints one line:

    session_load: 100000 events in 0.25 s; baseline json.loads 0.64 s; ratio 0.40x (target <= 0.5x) MET

Run: `.venv/bin/python benchmarks/bench_session_load.py`
"""

from __future__ import annotations

import json
import random
import tempfile
import time
from collections.abc import Callable

import anyio
from _targets import against

from askbridge.host.host import Host
from askbridge.host.log import events as ev
from askbridge.host.store.datadir import open_store
from askbridge.host.store.store_api import EventStore, encode_event

EVENT_COUNT = 100_000
BATCH_SIZE = 50
REPEATS = 5
clock = time.process_time  # module docstring: CPU time, not wall time


def make_events(count: int, rng: random.Random) -> list[ev.Event]:
    """A plausible turn mix: calls with arguments, results of varying length, messages."""
    made: list[ev.Event] = []
    while len(made) < count:
        n = len(made)
        text = "lorem ipsum dolor sit amet " * rng.randint(1, 15)
        made.extend(
            [
                ev.turn_start(f"turn-{n}", "prompt"),
                ev.assistant_message(text, [{"id": f"c{n}", "name": "read", "arguments": {}}]),
                ev.tool_call(f"c{n}", "read", {"path": f"src/file_{n}.py", "lines": [1, 80]}),
                ev.tool_result(f"c{n}", "read", text * 2),
                ev.user_message(ev.text_content(text), source=ev.reply_source(f"c{n}")),
                ev.turn_end(f"turn-{n}", "end_turn"),
            ]
        )
    return made[:count]


def best_of(repeats: int, work: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = clock()
        work()
        best = min(best, clock() - start)
    return best


async def written(store: EventStore, header: ev.Event, events: list[ev.Event]) -> None:
    """The session stored in batches, as the host does, and read back unchanged."""
    await store.create_session(header)
    for start in range(0, EVENT_COUNT, BATCH_SIZE):
        await store.append("bench", events[start : start + BATCH_SIZE])
    assert (await store.load("bench"))[1:] == events, "store returned different events"
    assert (await store.load_lazily("bench"))[1:] == events, "a lazy load differs"


async def host_load(store: EventStore) -> float:
    """Seconds `Host.load_session` takes, in a new Host (nothing of the session cached)."""
    async with Host(store) as host:
        start = clock()
        session = await host.load_session("bench")
        elapsed = clock() - start
        assert session.turns == EVENT_COUNT // 6 + 1, session.turns
    return elapsed


def main() -> None:
    events = make_events(EVENT_COUNT, random.Random(7))
    header = ev.session_header(
        session_id="bench",
        agent_id="agent",
        origin="root",
        cwd="/bench",
        model={"kind": "script", "steps": []},
        ask_user_question={"mode": "timed", "timeout": 60},
        created_at="2025-01-01T00:00:00Z",
    )
    with tempfile.TemporaryDirectory(prefix="askbridge-bench-") as data_dir:
        store = open_store(data_dir)
        try:
            anyio.run(written, store, header, events)
            load_s = min(anyio.run(host_load, store) for _ in range(REPEATS))
        finally:
            anyio.run(store.close)

    texts = [encode_event(event) for event in events]
    loads = json.loads
    baseline_s = best_of(REPEATS, lambda: [loads(text) for text in texts])
    print(
        f"session_load: {EVENT_COUNT} events in {load_s:.2f} s; "
        f"baseline json.loads {baseline_s:.2f} s; ratio {against(load_s / baseline_s, '<=', 0.5)}"
    )


if __name__ == "__main__":
    main()
