"""A waiting question's policy events in time (R3, R5): escalation steps, then a deny.

`QuestionTimeline` is pure: given the decision and when the question was asked, it
says who the audience is at any time and which events are due at `now`, handing out
each one once (R3: once per step, an event), so a host that asks again after a
restart (`steps_taken` from the log) or twice in one moment does not repeat a step.
A deny ends the timeline: the question is settled by it or, if a person was
quicker, by them.

`TimelineTimer` runs one on an injected clock (core/clock.py): one timer at a time,
at the next event. It has its own timers only: a timed wait's deadline is the core's
and nothing here moves it (R3: escalation never changes a timed wait's deadline).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from askbridge.core.clock import Clock, TimerHandle

from .audience import Audience
from .decisions import AutoAnswer, AutoKind, Decision


@dataclass(frozen=True, slots=True)
class Escalated:
    """Step `step` (1-based) widened the audience; a card says "escalated from `before`"."""

    step: int
    at_ms: float
    before: Audience
    after: Audience


@dataclass(frozen=True, slots=True)
class DenyDue:
    """Nobody answered in the rule's time: the rule's no races any late human answer."""

    at_ms: float
    auto: AutoAnswer


TimelineEvent = Escalated | DenyDue


class QuestionTimeline:
    def __init__(self, decision: Decision, asked_at_ms: float, *, steps_taken: int = 0) -> None:
        self.asked_at_ms = asked_at_ms
        audiences = [decision.audience]
        for step in decision.escalation:
            audiences.append(audiences[-1].widened(step.target))
        self._audiences = audiences
        self._step_at = [asked_at_ms + s.after_ms for s in decision.escalation]
        self._taken = min(steps_taken, len(self._step_at))
        deny = decision.auto_of(AutoKind.DENY)
        self._deny = deny
        self._deny_at = None if deny is None else asked_at_ms + deny.after_ms
        self._over = False

    @property
    def audience(self) -> Audience:
        """Who sees the question now: the route and every step taken so far."""
        return self._audiences[self._taken]

    @property
    def steps_taken(self) -> int:
        return self._taken

    def audience_at(self, now: float) -> Audience:
        """Who the schedule says sees it at `now`, whether or not its steps were handed out."""
        return self._audiences[sum(1 for at in self._step_at if at <= now)]

    def next_at(self) -> float | None:
        """When the next event is due; None once nothing more can happen."""
        if self._over:
            return None
        times = [] if self._taken == len(self._step_at) else [self._step_at[self._taken]]
        if self._deny_at is not None:
            times.append(self._deny_at)
        return min(times, default=None)

    def due(self, now: float) -> tuple[TimelineEvent, ...]:
        """The events due at `now`, in time order (a step before a deny due at the same
        time), each once; after a deny, none."""
        events: list[TimelineEvent] = []
        while not self._over:
            step_at = self._step_at[self._taken] if self._taken < len(self._step_at) else None
            if (
                step_at is not None
                and step_at <= now
                and (self._deny_at is None or step_at <= self._deny_at)
            ):
                before, self._taken = self._audiences[self._taken], self._taken + 1
                events.append(Escalated(self._taken, step_at, before, self.audience))
            elif self._deny is not None and self._deny_at is not None and self._deny_at <= now:
                events.append(DenyDue(self._deny_at, self._deny))
                self._over = True
            else:
                break
        return tuple(events)

    def settle(self) -> None:
        """The question settled: nothing more is due."""
        self._over = True


class TimelineTimer:
    """Runs a timeline on `clock`: `on_event` gets each event when it is due, once."""

    def __init__(
        self,
        timeline: QuestionTimeline,
        clock: Clock,
        on_event: Callable[[TimelineEvent], None],
    ) -> None:
        self.timeline = timeline
        self._clock = clock
        self._on_event = on_event
        self._handle: TimerHandle | None = None
        self._cancelled = False
        self._arm()

    def _arm(self) -> None:
        at = self.timeline.next_at()
        if at is not None and not self._cancelled:
            self._handle = self._clock.call_at(at, self._fire)

    def _fire(self) -> None:
        self._handle = None
        for event in self.timeline.due(self._clock.now()):
            if self._cancelled:
                return
            self._on_event(event)
        self._arm()

    def cancel(self) -> None:
        """The question settled (or went away): no event after this one."""
        self._cancelled = True
        self.timeline.settle()
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
