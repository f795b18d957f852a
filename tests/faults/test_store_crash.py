"""D2 under a real `kill -9`: a child process appends batches as fast as it can and
reports each one on stdout after `append` returns; the parent kills it with
SIGKILL mid-stream, reopens the data directory and checks that

- every event is whole (valid JSON with its full padding) and sequence numbers
  run 0..n-1 without gaps,
- every batch is all there or not there at all (group commit is atomic),
- every batch the child reported as committed is present (D1: committed
  before `append` returned).

Padding sizes vary up to ~60 kB so batches span many pages and WAL frames,
which is where a torn write would show.
"""

from __future__ import annotations

import asyncio
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from askbridge.host.store.datadir import DB_FILE_NAME, open_store

SESSION = "crash"

CHILD = """
import asyncio
import sys
from askbridge.host.log import events as ev
from askbridge.host.store.datadir import open_store

async def main():
    store = open_store(sys.argv[1])
    await store.create_session(ev.session_header(
        session_id="crash", agent_id="a", origin="root", cwd="/", model={},
        ask_user_question={"mode": "legacy"}, created_at="2025-01-01T00:00:00Z"))
    batch = 0
    while True:
        size = 1 + batch % 5
        pad = "x" * (batch * 7919 % 60000)
        await store.append("crash", [
            {"type": "test/crash", "batch": batch, "index": i, "of": size, "pad": pad}
            for i in range(size)
        ])
        print(batch, flush=True)
        batch += 1

asyncio.run(main())
"""


def pad_length(batch: int) -> int:
    return batch * 7919 % 60000


@pytest.mark.parametrize("kill_after", [1, 3, 10, 40, 150, 400])
def test_D2_kill_9_leaves_only_whole_events_and_every_reported_commit(
    tmp_path: Path, kill_after: int
) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    reported: list[int] = []
    try:
        while len(reported) < kill_after:
            line = child.stdout.readline()
            assert line, f"child stopped early: {child.stderr.read() if child.stderr else ''}"
            reported.append(int(line))
        child.send_signal(signal.SIGKILL)
        # Lines printed before the kill landed were committed too. Read them through the
        # same buffered file: communicate() would read the raw fd and miss what
        # readline() already buffered.
        rest = child.stdout.read()
        err = child.stderr.read() if child.stderr else ""
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == -signal.SIGKILL, err
    reported += [int(line) for line in rest.split()]
    assert reported == list(range(len(reported)))

    # The kernel dropped the dead child's lock: reopening needs no cleanup.
    store = open_store(tmp_path)
    try:
        events = asyncio.run(store.load(SESSION))
    finally:
        asyncio.run(store.close())
    with sqlite3.connect(tmp_path / DB_FILE_NAME) as conn:
        seqs = [s for (s,) in conn.execute("SELECT seq FROM events ORDER BY seq")]
    assert seqs == list(range(len(events)))

    assert events[0]["type"] == "session/header"
    batches: list[list[dict[str, object]]] = []
    for event in events[1:]:
        assert event["pad"] == "x" * pad_length(int(event["batch"])), "torn event"
        if event["index"] == 0:
            batches.append([])
        batches[-1].append(event)
    for number, batch in enumerate(batches):
        size = 1 + number % 5
        assert [(e["batch"], e["index"], e["of"]) for e in batch] == [
            (number, i, size) for i in range(size)
        ], f"batch {number} is not whole"
    assert len(batches) >= len(reported), "a batch reported as committed is missing"
    # At most the one batch in flight at the kill may be present but unreported.
    assert len(batches) <= len(reported) + 1
