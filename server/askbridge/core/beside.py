"""`beside(work, side, *args)`: await `work` while `side(*args)` runs as a task, then end it.

For a wait with something shown next to it: the LSP fallback's countdown beside
its `window/showMessageRequest`s, the MCP door's progress notifications beside
an ask. `side` is cancelled as soon as `work` ends, however it ends. A failure
of `work` is raised as itself: raised inside the task group it would come out
wrapped in an ExceptionGroup, and callers (and the wire) match on its class.
Cancellation from outside propagates as usual.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

import anyio

T = TypeVar("T")
SideTask = Callable[..., Coroutine[Any, Any, Any]]


async def beside(work: Awaitable[T], side: SideTask, *args: Any) -> T:
    failure: Exception | None = None
    async with anyio.create_task_group() as tg:
        tg.start_soon(side, *args)
        try:
            result = await work
        except Exception as exc:
            failure = exc
        finally:
            tg.cancel_scope.cancel()
    if failure is not None:
        raise failure
    return result
