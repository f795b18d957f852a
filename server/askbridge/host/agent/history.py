"""A session's log as a sequence, read from the store only if someone looks at it.

A loaded session keeps its folds, never its events (S10). The one reader that
needs all of them, an endpoint model's conversation, gets a `LazyHistory`
every step: a script model never looks, so a scripted turn never reads the log.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import overload

from ..log import events as ev


class LazyHistory(Sequence[ev.Event]):
    def __init__(self, read: Callable[[], list[ev.Event]]) -> None:
        self._read = read
        self._events: list[ev.Event] | None = None

    def _loaded(self) -> list[ev.Event]:
        if self._events is None:
            self._events = self._read()
        return self._events

    def __len__(self) -> int:
        return len(self._loaded())

    @overload
    def __getitem__(self, index: int) -> ev.Event: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[ev.Event]: ...

    def __getitem__(self, index: int | slice) -> ev.Event | Sequence[ev.Event]:
        return self._loaded()[index]

    def __iter__(self) -> Iterator[ev.Event]:
        return iter(self._loaded())
