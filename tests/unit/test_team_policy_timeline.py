"""R3 and R5 in time, on the injected clock: escalation steps once each, a deny only after
its time, and a timed wait's deadline left where it was."""

from __future__ import annotations

from askbridge.core.clock import ManualClock
from askbridge.host.team.decisions import Decision, decide
from askbridge.host.team.facts import AskedQuestion, IntentKind, QuestionFacts, SessionFacts
from askbridge.host.team.policy_file import parse_policy
from askbridge.host.team.timeline import (
    DenyDue,
    Escalated,
    QuestionTimeline,
    TimelineEvent,
    TimelineTimer,
)

PEOPLE = {"alice": ["leads"], "bob": ["leads"], "carol": ["devs"]}
MINUTE = 60_000
ESCALATING = """\
[[rule]]
name = "plans"
route = "person:carol"
escalate = [
  { after = "10m", to = "role:leads" },
  { after = "30m", to = "everyone" },
]
"""
APPROVAL = QuestionFacts(
    IntentKind.APPROVAL,
    (AskedQuestion("approval", "Allow Bash?", ("Allow", "Deny")),),
    "Allow",
    "Deny",
)


def decision_of(text: str) -> Decision:
    return decide(parse_policy(text, "team.toml", PEOPLE), SessionFacts(), APPROVAL)


def run(
    timeline: QuestionTimeline, clock: ManualClock
) -> tuple[list[tuple[float, TimelineEvent]], TimelineTimer]:
    seen: list[tuple[float, TimelineEvent]] = []
    timer = TimelineTimer(timeline, clock, lambda event: seen.append((clock.now(), event)))
    return seen, timer


def test_team_policy_escalation_widens_person_then_role_then_everyone_once_per_step() -> None:
    clock = ManualClock(start=5_000)
    timeline = QuestionTimeline(decision_of(ESCALATING), clock.now())
    seen, _ = run(timeline, clock)
    assert str(timeline.audience) == "person:carol"
    clock.advance(10 * MINUTE - 1)
    assert seen == []
    clock.advance(1)
    assert [
        (at, e.step, str(e.before), str(e.after)) for at, e in seen if isinstance(e, Escalated)
    ] == [(5_000 + 10 * MINUTE, 1, "person:carol", "person:carol + role:leads")]
    assert str(timeline.audience) == "person:carol + role:leads"
    clock.advance(60 * MINUTE)
    assert [e.step for _, e in seen if isinstance(e, Escalated)] == [1, 2]
    assert seen[1][0] == 5_000 + 30 * MINUTE  # fired at its own time, not when the clock stopped
    assert str(timeline.audience) == "everyone"
    clock.advance(24 * 60 * MINUTE)
    assert len(seen) == 2 and clock.pending_timers == 0


def test_team_policy_escalation_steps_due_together_come_once_each_in_order() -> None:
    timeline = QuestionTimeline(decision_of(ESCALATING), 0)
    events = timeline.due(45 * MINUTE)
    assert [(e.step, e.at_ms) for e in events if isinstance(e, Escalated)] == [
        (1, 10 * MINUTE),
        (2, 30 * MINUTE),
    ]
    assert timeline.due(45 * MINUTE) == () and timeline.due(90 * MINUTE) == ()
    assert timeline.next_at() is None


def test_team_policy_the_schedule_says_the_audience_at_any_time() -> None:
    timeline = QuestionTimeline(decision_of(ESCALATING), 1_000)
    at = timeline.audience_at
    assert [
        str(at(t)) for t in (0, 1_000 + 10 * MINUTE - 1, 1_000 + 10 * MINUTE, 1_000 + 30 * MINUTE)
    ] == [
        "person:carol",
        "person:carol",
        "person:carol + role:leads",
        "everyone",
    ]
    assert timeline.steps_taken == 0  # asking is not taking a step


def test_team_policy_steps_taken_before_a_restart_are_not_taken_again() -> None:
    timeline = QuestionTimeline(decision_of(ESCALATING), 0, steps_taken=1)
    assert str(timeline.audience) == "person:carol + role:leads"
    assert timeline.next_at() == 30 * MINUTE
    assert [e.step for e in timeline.due(60 * MINUTE) if isinstance(e, Escalated)] == [2]


def test_team_policy_escalation_leaves_a_timed_waits_deadline_alone() -> None:
    """R3: the deadline is the core's timer on the same clock; escalating neither moves nor
    cancels it."""
    clock = ManualClock()
    expired: list[float] = []
    clock.call_at(15 * MINUTE, lambda: expired.append(clock.now()))
    seen, _ = run(QuestionTimeline(decision_of(ESCALATING), clock.now()), clock)
    clock.advance(12 * MINUTE)
    assert len(seen) == 1 and expired == []
    clock.advance(3 * MINUTE)
    assert expired == [15 * MINUTE]


def test_team_policy_deny_after_comes_only_after_its_time_and_ends_the_timeline() -> None:
    """X5 and R5: nothing is denied (or allowed) before the rule's time with no human."""
    clock = ManualClock()
    decision = decision_of(ESCALATING + 'deny_after = "20m"\n')
    timeline = QuestionTimeline(decision, clock.now())
    seen, _ = run(timeline, clock)
    clock.advance(20 * MINUTE - 1)
    assert [type(e) for _, e in seen] == [Escalated]
    clock.advance(1)
    at, deny = seen[-1]
    assert isinstance(deny, DenyDue) and at == deny.at_ms == 20 * MINUTE
    assert deny.auto.provenance == "policy:plans" and deny.auto.items[0].selected == ("Deny",)
    clock.advance(60 * MINUTE)
    assert len(seen) == 2  # the 30m step never comes: the question was settled by then
    assert clock.pending_timers == 0


def test_team_policy_a_step_due_with_the_deny_comes_first() -> None:
    decision = decision_of(ESCALATING + 'deny_after = "10m"\n')
    events = QuestionTimeline(decision, 0).due(10 * MINUTE)
    assert [type(e) for e in events] == [Escalated, DenyDue]


def test_team_policy_a_settled_question_has_no_more_events() -> None:
    clock = ManualClock()
    decision = decision_of(ESCALATING + 'deny_after = "1h"\n')
    seen, timer = run(QuestionTimeline(decision, clock.now()), clock)
    clock.advance(5 * MINUTE)
    timer.cancel()  # a person answered
    timer.cancel()
    clock.advance(2 * 60 * MINUTE)
    assert seen == [] and clock.pending_timers == 0


def test_team_policy_a_handler_that_settles_stops_the_events_after_it() -> None:
    clock = ManualClock()
    seen: list[TimelineEvent] = []
    timer: list[TimelineTimer] = []

    def settle_on_first(event: TimelineEvent) -> None:
        seen.append(event)
        timer[0].cancel()

    timer.append(
        TimelineTimer(QuestionTimeline(decision_of(ESCALATING), 0), clock, settle_on_first)
    )
    clock.advance(60 * MINUTE)  # both steps are due in this one move
    assert [e.step for e in seen if isinstance(e, Escalated)] == [1]


def test_team_policy_a_rule_without_time_arms_no_timer() -> None:
    clock = ManualClock()
    decision = decision_of('[[rule]]\nname = "r"\nroute = "role:leads"\n')
    run(QuestionTimeline(decision, clock.now()), clock)
    assert clock.pending_timers == 0
