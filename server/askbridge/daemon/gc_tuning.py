"""`tune_gc_for_serving()`: the one process-wide garbage-collector setting, made once when
a host starts serving (bootstrap.py `serve_host`).

Two changes, for one reason: the cycle collector finds almost nothing to collect in a
host, yet rescans what it holds.

- Everything allocated before serving (modules, classes, pydantic's schemas: ~100,000
  objects) lives as long as the process. `gc.freeze()` moves it out of the collector's
  generations, so full collections stop rescanning it.
- A question leaves no cyclic garbage (open_question.py lets go of its cards), so the
  young generation's collections find none: at the default threshold (700 net
  container allocations) they only rescan the questions in flight, and their survivors
  set off full collections of the whole heap. 10,000 makes them rare.

Cyclic garbage is still collected, only less often; a bulk fold or decode pauses the
collector outright (host/log/gcpause.py).

What it buys, measured with benchmarks/profile_host.py callgrind (the inline host over
bench_bridge_concurrent.py's workload, 64 sessions, 3,200 questions; two runs each):
724,400-724,500 instructions per question against 755,100-756,900 untuned, ~4% fewer.
The threshold alone gives 729,400, the freeze alone 750,300.
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 10_000


def tune_gc_for_serving() -> None:
    """Freeze what start-up allocated and raise the young generation's threshold."""
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, *gc.get_threshold()[1:])
