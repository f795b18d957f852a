"""How a command's exit reads: Ctrl-C is status 130, however it arrives.

The console script (entry.py) and the full command line (commands.py) both end with
it, so it lives here, importing nothing: entry.py's fast path pays nothing for it.
"""

from __future__ import annotations

EXIT_INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for Ctrl-C


def interrupted(exc: BaseException) -> bool:
    """Whether `exc` is Ctrl-C's KeyboardInterrupt, or was raised because of it.

    The inline host answers `initialize` before it has imported everything (lsp/early.py),
    so Ctrl-C can land inside an import. Where that import is running a class body's
    `__set_name__` (a dataclass field), Python 3.11 wraps the KeyboardInterrupt in a
    RuntimeError: measured under load, 1 Ctrl-C in ~40 ended with that traceback and
    status 1 instead of 130. The interrupt is still the cause, so it is still Ctrl-C."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False
