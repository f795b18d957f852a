"""First answer wins, in the database (G6).

`offer(...)` inserts an answer for (session, call) unless a live one (not withdrawn)
is there: the partial unique index `answers_live` (pg_team_schema.py) lets at most
one in, whichever host, door or client the offers come from, so no host has to
decide a race it cannot see. The insert that got in returns `Won`; every other gets
`AnsweredElsewhere` with the answer that won (who, from where, when), so a door can
say so (M5, L6). An insert that met a winner whose transaction was still open waits
for it; the winner is then read in a new statement (the insert's snapshot predates
it), and if it was withdrawn meanwhile the offer is made again: never both, never
neither.

Exactly once across a lost reply: each offer carries a random `offer_id`; a retry
after a connection lost mid-insert finds its own row and reports Won, not
AnsweredElsewhere to itself.

A new answer notifies `askbridge_answer` with [session, call] (JSON, no text) so
the session's owner learns of it at once (`hints`); `catch_up` hints every
unconsumed answer of the sessions this host owns, for what was sent while its
listening connection was down. The owner consumes an answer in the append that logs
the event using it (pg_commit.py), which is what makes an acknowledged answer
consumed exactly once, even across a kill -9: before that commit the answer is
unconsumed and the next owner finds it, after it the event is in the log.
`will_use(session, call)`: the owner settled the question with the live answer, so
the next `tool/result` of that call it appends (or the inbox item queueing it as a
late reply, L4) consumes it (`uses_in`, read by the
append; `used` once that commit is in).
`withdraw` takes back an answer not consumed yet (the owner refused it), so the
question is open to another answer.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Sequence
from typing import Any

from askbridge.core.errors import StoreError
from askbridge.protocol.text import compact_bytes

from .pg_commit import Use, event_type
from .pg_connections import Conn, Connections
from .pg_follow import Hints, session_call
from .team_records import Answer, AnsweredElsewhere, Offered, Won

CHANNEL = "askbridge_answer"
_ROUNDS = 8  # offers in a row that each lose to an answer withdrawn before it is read

_COLUMNS = "id, session_id, call_id, answer, person, host, door, client, answered_at, consumed_seq"
_OFFER = f"""
INSERT INTO askbridge.answers
    (session_id, call_id, answer, person, host, door, client, offer_id)
VALUES (%(session)s, %(call)s, %(answer)s::json, %(person)s, %(host)s, %(door)s,
    %(client)s, %(offer)s)
ON CONFLICT (session_id, call_id) WHERE withdrawn_at IS NULL DO NOTHING
RETURNING {_COLUMNS}, pg_notify('{CHANNEL}', json_build_array(session_id, call_id)::text)
"""
_LIVE = f"""
SELECT {_COLUMNS}, offer_id FROM askbridge.answers
WHERE session_id = %s AND call_id = %s AND withdrawn_at IS NULL
"""
_UNCONSUMED = f"""
SELECT {_COLUMNS} FROM askbridge.answers
WHERE session_id = ANY (%b::text[]) AND withdrawn_at IS NULL AND consumed_seq IS NULL
ORDER BY session_id, call_id
"""
_WITHDRAW = f"""
UPDATE askbridge.answers SET withdrawn_at = clock_timestamp()
WHERE id = %s AND withdrawn_at IS NULL AND consumed_seq IS NULL
RETURNING pg_notify('{CHANNEL}', json_build_array(session_id, call_id)::text)
"""


def _call_of(hint: tuple[str, str]) -> tuple[str, str]:
    return hint


class Answers:
    def __init__(self, db: Connections, host_id: str, owned: Callable[[], list[str]]) -> None:
        self._db = db
        self.host_id = host_id
        self._owned = owned  # the sessions this host owns now
        self.hints: Hints[tuple[str, str]] = Hints(_call_of)
        self._to_use: dict[str, set[str]] = {}  # session -> calls its next results consume

    def will_use(self, session_id: str, call_id: str) -> None:
        """The next `tool/result` of `call_id` consumes its live answer (G6, module doc)."""
        self._to_use.setdefault(session_id, set()).add(call_id)

    def uses_in(self, batches: Sequence[tuple[str, Sequence[str]]]) -> list[Use]:
        """The answers a commit of `batches` consumes: each awaited call's tool/result."""
        if not self._to_use:
            return []
        uses: list[Use] = []
        index: dict[str, int] = {}  # each session's events so far, across its batches
        for session_id, bodies in batches:
            first = index.get(session_id, 0)
            index[session_id] = first + len(bodies)
            calls = self._to_use.get(session_id)
            if not calls:
                continue
            for i, body in enumerate(bodies):
                call_id = _call_carried(body)
                if call_id is not None and call_id in calls:
                    uses.append((session_id, call_id, first + i))
        return uses

    def used(self, uses: Sequence[Use]) -> None:
        """A commit consuming `uses` is in."""
        for session_id, call_id, _ in uses:
            calls = self._to_use.get(session_id)
            if calls is not None:
                calls.discard(call_id)
                if not calls:
                    del self._to_use[session_id]

    async def offer(
        self,
        session_id: str,
        call_id: str,
        answer: Any,
        *,
        person: str | None = None,
        door: str | None = None,
        client: str | None = None,
    ) -> Offered:
        """Won, or AnsweredElsewhere with the live answer (module docstring)."""
        try:
            text = compact_bytes(answer).decode()
        except (TypeError, ValueError, RecursionError) as exc:
            raise StoreError(
                f"cannot store the answer to {call_id!r}: it is not plain JSON"
            ) from exc
        params = {
            "session": session_id,
            "call": call_id,
            "answer": text,
            "person": person,
            "host": self.host_id,
            "door": door,
            "client": client,
            "offer": secrets.token_hex(12),
        }

        async def attempt(conn: Conn, retried: bool) -> Offered:
            for _ in range(_ROUNDS):
                cur = await conn.execute(_OFFER, params)
                row = await cur.fetchone()
                if row is not None:
                    return Won(_answer(row))
                cur = await conn.execute(_LIVE, (session_id, call_id))
                live = await cur.fetchone()
                if live is not None:
                    if retried and live[-1] == params["offer"]:
                        return Won(_answer(live))  # ours, its reply lost
                    return AnsweredElsewhere(_answer(live))
            raise StoreError(
                f"cannot answer {call_id!r} in the team store {self._db.where}: every answer "
                f"it met was withdrawn before it could be read ({_ROUNDS} times)"
            )

        return await self._db.run("write to", attempt)

    async def live(self, session_id: str, call_id: str) -> Answer | None:
        """The question's live answer, consumed or not; None when there is none."""

        async def read(conn: Conn, _: bool) -> Answer | None:
            cur = await conn.execute(_LIVE, (session_id, call_id))
            row = await cur.fetchone()
            return None if row is None else _answer(row)

        return await self._db.run("read", read)

    async def unconsumed(self, session_ids: list[str]) -> list[Answer]:
        """The live answers of `session_ids` that no event has used yet."""

        async def read(conn: Conn, _: bool) -> list[Answer]:
            cur = await conn.execute(_UNCONSUMED, (session_ids,))
            return [_answer(row) for row in await cur.fetchall()]

        return await self._db.run("read", read) if session_ids else []

    async def withdraw(self, answer_id: int) -> bool:
        """Take back an answer no event used (the owner refused it); False when it was
        consumed or withdrawn already."""

        async def write(conn: Conn, _: bool) -> bool:
            cur = await conn.execute(_WITHDRAW, (answer_id,))
            return await cur.fetchone() is not None

        return await self._db.run("write to", write)

    def notified(self, payload: str) -> None:
        """A notification on `askbridge_answer`: [session, call]."""
        hint = session_call(payload)
        if hint is not None:
            self.hints.tell(hint)

    async def catch_up(self) -> None:
        for answer in await self.unconsumed(self._owned()):
            self.hints.tell((answer.session_id, answer.call_id))


def _call_carried(body: str) -> str | None:
    """The call whose answer an event carries: a tool/result's, or a queued late reply's
    (an inbox item whose source is the reply to a call, L4)."""
    kind = event_type(body)
    if kind == "tool/result":
        call_id = json.loads(body).get("callId")
    elif kind == "agent/inbox/inserted":
        source = json.loads(body).get("message", {}).get("source") or {}
        call_id = source.get("callId") if source.get("kind") == "user-question-reply" else None
    else:
        return None
    return call_id if isinstance(call_id, str) else None


def _answer(row: tuple[Any, ...]) -> Answer:
    return Answer(*row[:10])
