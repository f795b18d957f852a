"""What the team store's many-host calls return (G4-G8), without its driver: the host and
its doors can name these types, and catch SessionFenced, in solo use too, where psycopg
is never imported (G1).

- `SessionFenced` (G4): a write for a session another host now owns. It names that
  host, so a door can say where the session runs instead of a bare failure; nothing of
  the refused commit was written.
- `Ownership` (G4): what `own` got, the lease's epoch and why it was granted ("free":
  nobody held it, "mine": this store already did, "lapsed": its lease ran out, "dead":
  its owner's liveness lock is free, "gone": its owner's host row is gone).
- `Won` / `AnsweredElsewhere` (G6): the outcome of offering an answer. Exactly one offer
  per question wins while its answer stands; every other gets the live answer it lost
  to, so a door can say who answered, from where, and when.
- `Claim` / `Claims` (G7, C1-C5): the live claims on a question, and when the last of
  them lapses unless renewed (the owner re-reads then).

Every time here is the database's (`clock_timestamp()`, G7); db_clock.py maps one to a
host's monotonic clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from askbridge.core.errors import StoreError


class SessionFenced(StoreError):
    """A commit refused inside its transaction: `session_id` is owned by `owner_host`
    (its id) now, named `owner_name`, under a newer epoch than the writer's (G4)."""

    def __init__(
        self,
        session_id: str,
        owner_host: str | None,
        owner_name: str | None,
        where: str,
        outcome: str = "",
    ) -> None:
        host = f"host {owner_name} ({owner_host})" if owner_host else "no host"
        super().__init__(
            f"session {session_id!r} is run by {host}, not by this one (team store "
            f"{where}){outcome}"
        )
        self.session_id = session_id
        self.owner_host = owner_host
        self.owner_name = owner_name


@dataclass(frozen=True)
class Ownership:
    session_id: str
    epoch: int
    why: str  # free | mine | lapsed | dead | gone
    previous_host: str | None  # who held it before, for "took over from …"
    lease_until: datetime


@dataclass(frozen=True)
class Answer:
    """One stored answer to a question: the one live answer, or a withdrawn one."""

    answer_id: int
    session_id: str
    call_id: str
    answer: Any  # the answer payload as offered (decoded JSON)
    person: str | None
    host: str | None
    door: str | None
    client: str | None
    answered_at: datetime
    consumed_seq: int | None


@dataclass(frozen=True)
class Won:
    answer: Answer


@dataclass(frozen=True)
class AnsweredElsewhere:
    answer: Answer  # the live answer this offer lost to


Offered = Won | AnsweredElsewhere


@dataclass(frozen=True)
class Claim:
    session_id: str
    call_id: str
    host: str
    client: str
    claimed_at: datetime
    lease_until: datetime


@dataclass(frozen=True)
class Claims:
    """The live claims on one question as the database saw them at `now`."""

    claims: tuple[Claim, ...]
    now: datetime

    @property
    def until(self) -> datetime | None:
        """When the last live claim lapses unless renewed; None when there is none."""
        return max((claim.lease_until for claim in self.claims), default=None)


@dataclass(frozen=True)
class HostRecord:
    host_id: str
    name: str
    pid: int
    started_at: datetime
    last_seen: datetime
    up: bool  # its liveness lock is held (G4)
