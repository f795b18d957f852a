"""What an `ask_user_question` call tells the doors beside its questions (`extra`).

`TOOL_CALL_ID` names the tool call asking, also when it has no wait (legacy), so a
client's form can name it (ACP `toolCallId`, protocol.md "ACP front door").
`CallExtra` is that one-entry mapping as a record: a dict and its key table are
~180 B, held for as long as the question waits, and thousands may wait at once
(benchmarks/bench_bridge_memory.py).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Final

TOOL_CALL_ID: Final = "toolCallId"


class CallExtra(Mapping[str, object]):
    """`{TOOL_CALL_ID: call_id}`, read-only, as one slot."""

    __slots__ = ("_call_id",)

    def __init__(self, call_id: str) -> None:
        self._call_id = call_id

    def __getitem__(self, key: str) -> object:
        if key == TOOL_CALL_ID:
            return self._call_id
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter((TOOL_CALL_ID,))

    def __len__(self) -> int:
        return 1

    def __repr__(self) -> str:
        return repr(dict(self))
