"""`settle()`: let every task of the running loop run until all are blocked, no real time passing.

Shared by the in-process tests (tests/ is on sys.path through its conftest).
anyio's `wait_all_tasks_blocked` is not enough here: it counts a task waiting
on a future as blocked even when a callback already queued on the loop will
release it — the group commit (host/store/commits.py) releases its waiters from one
`call_soon` callback at the end of a loop turn — and it sleeps 0.1 s between
looks.
"""

from __future__ import annotations

import asyncio
from typing import Any


async def settle() -> None:
    """Let every task run until all are blocked on something, without real time passing.

    Like anyio's `wait_all_tasks_blocked`, but it yields with `sleep(0)` instead
    of sleeping 0.1 s between looks, so a test with many steps stays fast.
    """
    loop = asyncio.get_running_loop()
    this = asyncio.current_task()
    for _ in range(10_000):
        await asyncio.sleep(0)
        # A blocked task may still be woken by a callback already queued on the loop
        # (e.g. a task group's task_done), so the ready queue must be empty too.
        if not getattr(loop, "_ready", ()) and all(
            task is this or _blocked(task) for task in asyncio.all_tasks()
        ):
            return
    raise AssertionError("tasks never settled: something is spinning")


def _blocked(task: asyncio.Task[Any]) -> bool:
    waiter = getattr(task, "_fut_waiter", None)  # what anyio's own helper inspects
    return waiter is not None and not waiter.done()
