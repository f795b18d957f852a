"""R4: "2 of role:leads" on an approval — one vote leaves it open, two settle it with one
answer naming the voters, one rejection rejects, and nobody's vote counts twice."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from askbridge.host.team.decisions import AnswerItem, decide
from askbridge.host.team.facts import AskedQuestion, IntentKind, QuestionFacts, SessionFacts
from askbridge.host.team.policy import Quorum
from askbridge.host.team.policy_file import parse_policy
from askbridge.host.team.quorum import Counted, Outcome, QuorumTally, Vote

PEOPLE = {"alice": ["leads"], "bob": ["leads"], "dan": ["leads"], "carol": ["devs"]}
APPROVAL = QuestionFacts(
    IntentKind.APPROVAL, (AskedQuestion("approval", "Deploy?", ("Ship", "Hold")),), "Ship", "Hold"
)
APPROVE, REJECT = Vote.APPROVE, Vote.REJECT


def two_leads() -> Quorum:
    policy = parse_policy(
        '[[rule]]\nname = "deploys"\nquorum = "2 of role:leads"\nmatch.kind = "approval"\n',
        "team.toml",
        PEOPLE,
    )
    quorum = decide(policy, SessionFacts(), APPROVAL).quorum
    assert quorum is not None
    return quorum


def test_team_policy_quorum_one_approval_leaves_it_open_two_settle_it() -> None:
    tally = QuorumTally(two_leads())
    assert tally.vote("alice", APPROVE) is Counted.COUNTED
    assert tally.outcome is Outcome.OPEN and tally.settlement is None
    assert str(tally) == "1 of 2 of role:leads: alice"
    assert tally.vote("bob", APPROVE) is Counted.COUNTED
    settled = tally.settlement
    assert settled is not None and settled.outcome is Outcome.APPROVED
    assert settled.voters == ("alice", "bob")
    assert settled.items(APPROVAL) == (AnswerItem("approval", ("Ship",)),)  # one answer


def test_team_policy_quorum_one_rejection_rejects() -> None:
    tally = QuorumTally(two_leads())
    tally.vote("alice", APPROVE)
    assert tally.vote("dan", REJECT) is Counted.COUNTED
    settled = tally.settlement
    assert settled is not None and settled.outcome is Outcome.REJECTED
    assert settled.voters == ("dan",)
    assert settled.items(APPROVAL) == (AnswerItem("approval", ("Hold",)),)
    assert tally.vote("bob", APPROVE) is Counted.CLOSED
    assert tally.outcome is Outcome.REJECTED


def test_team_policy_quorum_a_second_vote_by_the_same_person_does_not_count() -> None:
    tally = QuorumTally(two_leads())
    tally.vote("alice", APPROVE)
    assert tally.vote("alice", APPROVE) is Counted.AGAIN
    assert tally.vote("alice", REJECT) is Counted.AGAIN  # the first vote stands
    assert tally.outcome is Outcome.OPEN and tally.approvals == ("alice",)


def test_team_policy_quorum_only_the_roles_people_vote() -> None:
    tally = QuorumTally(two_leads())
    assert tally.vote("carol", APPROVE) is Counted.NOT_A_VOTER
    assert tally.vote("carol", REJECT) is Counted.NOT_A_VOTER
    assert tally.vote("mallory", APPROVE) is Counted.NOT_A_VOTER
    assert tally.outcome is Outcome.OPEN and tally.approvals == ()


def test_team_policy_quorum_replays_recorded_votes() -> None:
    """After a restart the host rebuilds the tally from the vote events, in their order."""
    tally = QuorumTally(two_leads(), [("alice", APPROVE), ("alice", APPROVE), ("carol", APPROVE)])
    assert tally.outcome is Outcome.OPEN
    tally.vote("bob", APPROVE)
    assert tally.settlement is not None and tally.settlement.voters == ("alice", "bob")


VOTES = st.lists(
    st.tuples(st.sampled_from(["alice", "bob", "dan", "carol"]), st.sampled_from(list(Vote))),
    max_size=8,
)


@given(VOTES)
def test_team_policy_quorum_settles_as_the_first_votes_say(votes: list[tuple[str, Vote]]) -> None:
    """Whatever the order: each lead's first vote counts; the first rejection among them
    before two approvals rejects; otherwise two approvals approve, naming those two."""
    first: dict[str, Vote] = {}
    expected, voters = Outcome.OPEN, ()
    for person, vote in votes:
        if person == "carol" or person in first or expected is not Outcome.OPEN:
            continue
        first[person] = vote
        approvals = tuple(p for p, v in first.items() if v is APPROVE)
        if vote is REJECT:
            expected, voters = Outcome.REJECTED, (person,)
        elif len(approvals) == 2:
            expected, voters = Outcome.APPROVED, approvals
    tally = QuorumTally(two_leads(), votes)
    assert tally.outcome is expected
    assert (tally.settlement.voters if tally.settlement else ()) == voters
