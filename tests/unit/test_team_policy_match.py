"""R2, R5, X5: which rule a question meets, and what that rule decides for it.

Matching is checked against an oracle written the plain way (`fnmatch.fnmatchcase`
on each glob, `re.search` on each question's text, rules in order), over policies
and facts Hypothesis makes up: the evaluation's shortcuts (literal globs as a set,
`PREFIX*` as `startswith`, one alternation for the rest) must not change a match.
"""

from __future__ import annotations

import fnmatch
import json
import re
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from askbridge.core.question import Option, Question
from askbridge.host.team import policy as policy_module
from askbridge.host.team.audience import TO_EVERYONE, People
from askbridge.host.team.decisions import NO_RULE, AnswerItem, AutoKind, decide
from askbridge.host.team.facts import AskedQuestion, IntentKind, QuestionFacts, SessionFacts
from askbridge.host.team.policy import SESSION_FIELDS, empty_policy
from askbridge.host.team.policy_file import parse_policy
from askbridge.protocol.vocabulary import ApprovalIntent, PlanReviewIntent

PEOPLE = {"alice": ["leads"], "bob": ["leads"], "carol": ["devs"]}
SESSION = SessionFacts(
    agent="claude-code", title="fix the build", cwd="/srv/ci/build-7", repository=None, origin="mcp"
)


def approval(text: str = "Allow Bash?") -> QuestionFacts:
    return QuestionFacts(
        IntentKind.APPROVAL, (AskedQuestion("approval", text, ("Allow", "Deny")),), "Allow", "Deny"
    )


def plain(*texts: str, timed: bool = False) -> QuestionFacts:
    asked = tuple(AskedQuestion(f"q{i}", t, ("Yes", "No")) for i, t in enumerate(texts))
    return QuestionFacts(IntentKind.PLAIN, asked, timed=timed)


def one_rule(match: str, action: str = 'route = "everyone"') -> str:
    return f'[[rule]]\nname = "r"\n{action}\n[rule.match]\n{match}\n'


@pytest.mark.parametrize(
    ("match", "session", "question", "matched"),
    [
        ("", SESSION, plain("anything"), True),  # no conditions: every question
        ('agent = "claude-code"', SESSION, plain("x"), True),
        ('agent = "claude"', SESSION, plain("x"), False),  # a glob is the whole value
        ('agent = "claude*"', SESSION, plain("x"), True),
        ('agent = "Claude*"', SESSION, plain("x"), False),  # case-sensitive
        ('cwd = "/srv/ci/*"', SESSION, plain("x"), True),
        ('cwd = "/srv/*/build-?"', SESSION, plain("x"), True),  # `*` and `?` in the middle
        ('cwd = "/srv/*"', SESSION, plain("x"), True),  # `*` crosses `/`
        ('cwd = "/ci/*"', SESSION, plain("x"), False),
        ('cwd = "*/build-[0-9]"', SESSION, plain("x"), True),
        ('cwd = ["/home/*", "/srv/ci/build-7"]', SESSION, plain("x"), True),  # any of them
        ('repository = "*"', SESSION, plain("x"), False),  # a missing fact matches nothing
        ('origin = "mcp"', SESSION, plain("x"), True),
        ('origin = "root"', SESSION, plain("x"), False),
        ('title = "fix *"', SESSION, plain("x"), True),
        ('kind = "approval"', SESSION, approval(), True),
        ('kind = "approval"', SESSION, plain("x"), False),
        ('kind = ["plain", "plan-review"]', SESSION, plain("x"), True),
        ("text = 'Bash'", SESSION, approval("Allow Bash?"), True),  # searched anywhere
        ("text = '^Bash'", SESSION, approval("Allow Bash?"), False),
        ("text = 'deploy'", SESSION, plain("Deploy now?"), False),
        ("text = '(?i)deploy'", SESSION, plain("Deploy now?"), True),
        ("text = 'prod'", SESSION, plain("Which db?", "Push to prod?"), True),  # any question
        ('agent = "claude-code"\nkind = "plain"', SESSION, approval(), False),  # all must hold
    ],
)
def test_team_policy_a_rule_matches_on_the_session_and_the_question(
    match: str, session: SessionFacts, question: QuestionFacts, matched: bool
) -> None:
    policy = parse_policy(one_rule(match), "p.toml", PEOPLE)
    assert (policy.first_match(session, question) is not None) is matched


def test_team_policy_the_first_matching_rule_wins() -> None:
    text = (
        '[[rule]]\nname = "narrow"\nroute = "role:leads"\nmatch = { kind = "approval" }\n'
        '[[rule]]\nname = "broad"\nroute = "person:carol"\n'
    )
    policy = parse_policy(text, "p.toml", PEOPLE)
    assert decide(policy, SESSION, approval()).rule is policy.rules[0]
    assert decide(policy, SESSION, plain("x")).rule is policy.rules[1]
    assert str(decide(policy, SESSION, plain("x")).audience) == "person:carol"


# The oracle's world: few values, so that rules often match and often do not.
VALUES = st.sampled_from(["a", "ab", "b/a", "/srv/ci", "/srv/ci/x", "A"])
GLOBS = st.sampled_from(["a", "a*", "*a", "?b", "*", "/srv/*", "/srv/ci", "[ab]*", "b/?", "A"])
TEXTS = st.sampled_from(["deploy now", "Allow Bash?", "rm -rf /", "", "DEPLOY"])
REGEXES = st.sampled_from(["deploy", "^Allow", "(?i)deploy", r"\brm\b", "x|now$"])
KINDS = st.sampled_from([k.value for k in IntentKind])
RULE_SPECS = st.fixed_dictionaries(
    {},
    optional={
        **{f: st.lists(GLOBS, min_size=1, max_size=3) for f in SESSION_FIELDS},
        "kind": st.lists(KINDS, min_size=1, max_size=2),
        "text": REGEXES,
    },
)
SESSIONS = st.builds(SessionFacts, **{f: st.none() | VALUES for f in SESSION_FIELDS})
QUESTIONS = st.builds(
    lambda kind, texts: QuestionFacts(
        kind, tuple(AskedQuestion(f"q{i}", t) for i, t in enumerate(texts))
    ),
    st.sampled_from(list(IntentKind)),
    st.lists(TEXTS, min_size=1, max_size=3),
)


def oracle(specs: list[dict[str, Any]], session: SessionFacts, question: QuestionFacts) -> int:
    for index, spec in enumerate(specs):
        if "kind" in spec and question.kind.value not in spec["kind"]:
            continue
        values = {f: getattr(session, f) for f in SESSION_FIELDS}
        if any(
            values[f] is None or not any(fnmatch.fnmatchcase(values[f], g) for g in spec[f])
            for f in SESSION_FIELDS
            if f in spec
        ):
            continue
        if "text" in spec and not any(re.search(spec["text"], q.text) for q in question.questions):
            continue
        return index
    return -1


def policy_text(specs: list[dict[str, Any]]) -> str:
    rules = []
    for index, spec in enumerate(specs):
        match = "\n".join(f"{key} = {json.dumps(value)}" for key, value in spec.items())
        rules.append(f'[[rule]]\nname = "r{index}"\nroute = "everyone"\n[rule.match]\n{match}\n')
    return "".join(rules)


@settings(max_examples=300, deadline=None)
@given(st.lists(RULE_SPECS, max_size=6), st.lists(SESSIONS, min_size=1, max_size=4), QUESTIONS)
def test_team_policy_evaluation_agrees_with_the_plain_reading(
    specs: list[dict[str, Any]], sessions: list[SessionFacts], question: QuestionFacts
) -> None:
    """Each session twice: the second reads the rules the policy narrowed for it."""
    policy = parse_policy(policy_text(specs), "p.toml", PEOPLE)
    for session in sessions + sessions:
        rule = policy.first_match(session, question)
        found = -1 if rule is None else policy.rules.index(rule)
        assert found == oracle(specs, session, question)
        each = [r.match.matches(session, question) for r in policy.rules]
        assert found == (each.index(True) if True in each else -1)


def test_team_policy_the_sessions_a_policy_keeps_are_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(policy_module, "SESSIONS_KEPT", 2)
    policy = parse_policy(one_rule('agent = "a*"'), "p.toml", PEOPLE)
    for agent in ("ab", "ac", "b", "ab"):
        matched = decide(policy, SessionFacts(agent=agent), plain("x")).rule is not None
        assert matched is agent.startswith("a")
        assert len(policy.by_session) <= 2


@settings(max_examples=200, deadline=None)
@given(SESSIONS, QUESTIONS, st.booleans())
def test_team_policy_no_rule_means_everyone_and_no_answer_x5(
    session: SessionFacts, question: QuestionFacts, with_rules: bool
) -> None:
    """X5: without a matching rule nothing answers by itself, not even a deny."""
    text = one_rule('agent = "nobody-has-this-agent"', 'answer = "Allow"')
    policy = parse_policy(text, "p.toml", PEOPLE) if with_rules else empty_policy(People.of(PEOPLE))
    decision = decide(policy, session, question)
    assert decision == NO_RULE
    assert decision.audience == TO_EVERYONE and decision.auto == () and decision.quorum is None


@settings(max_examples=200, deadline=None)
@given(SESSIONS, st.sampled_from(["Allow Bash?", "Allow Read?"]), st.booleans())
def test_team_policy_only_an_answer_rule_ever_allows_x5(
    session: SessionFacts, text: str, timed: bool
) -> None:
    """X5: route, escalate, quorum, pending and deny rules never pick an approval's approve
    label; the deny picks its reject label and only once its time has come (timeline tests)."""
    policy = parse_policy(
        '[[rule]]\nname = "p"\npending = true\ndeny_after = "1m"\nmatch.text = "Read"\n'
        '[[rule]]\nname = "q"\nquorum = "2 of role:leads"\nmatch.kind = "approval"\n',
        "p.toml",
        PEOPLE,
    )
    decision = decide(policy, session, replace(approval(text), timed=timed))
    chosen = [label for auto in decision.auto for item in auto.items for label in item.selected]
    assert "Allow" not in chosen
    assert {a.kind for a in decision.auto} <= {AutoKind.PENDING, AutoKind.DENY}


def test_team_policy_a_fixed_answer_names_its_rule_and_picks_an_offered_option() -> None:
    policy = parse_policy(one_rule("text = '^Allow Read'", 'answer = "Allow"'), "p.toml", PEOPLE)
    decision = decide(policy, SESSION, approval("Allow Read?"))
    auto = decision.auto_of(AutoKind.ANSWER)
    assert auto is not None and auto.provenance == "policy:r" and auto.after_ms == 0
    assert auto.items == (AnswerItem("approval", ("Allow",)),)
    assert auto.items[0].dump() == {"id": "approval", "selected": ["Allow"]}


def test_team_policy_a_fixed_answer_a_question_does_not_offer_leaves_it_to_people() -> None:
    policy = parse_policy(one_rule("", 'answer = "Yes"'), "p.toml", PEOPLE)
    assert decide(policy, SESSION, plain("a?", "b?")).auto_of(AutoKind.ANSWER) is not None
    decision = decide(policy, SESSION, approval())  # offers Allow and Deny, not Yes
    assert decision.auto == () and decision.audience == TO_EVERYONE
    assert "its answer 'Yes' is not an option of every question here" in decision.reason


def test_team_policy_pending_at_once_applies_to_a_timed_ask_only() -> None:
    policy = parse_policy(one_rule("", "pending = true"), "p.toml", PEOPLE)
    timed = decide(policy, SESSION, plain("x", timed=True))
    assert [(a.kind, a.provenance, a.items) for a in timed.auto] == [
        (AutoKind.PENDING, "policy:r", ())
    ]
    blocking = decide(policy, SESSION, plain("x"))
    assert blocking.auto == () and "only a timed ask can be pending" in blocking.reason


def test_team_policy_deny_is_the_reject_label_or_a_text_that_says_no() -> None:
    policy = parse_policy(one_rule("", 'deny_after = "15m"'), "p.toml", PEOPLE)
    deny = decide(policy, SESSION, approval()).auto_of(AutoKind.DENY)
    assert deny is not None and deny.after_ms == 900_000
    assert deny.items == (AnswerItem("approval", ("Deny",)),)
    said = "Denied by policy:r: nobody answered within 15m."
    deny = decide(policy, SESSION, plain("a?", "b?")).auto_of(AutoKind.DENY)
    assert deny is not None
    assert deny.items == (AnswerItem("q0", (), said), AnswerItem("q1", (), said))


def test_team_policy_the_reason_says_why_a_question_is_where_it_is() -> None:
    policy = parse_policy(
        '[[rule]]\nname = "plans"\nroute = "person:alice"\n'
        'escalate = [{ after = "10m", to = "role:leads" }, { after = "1h", to = "everyone" }]\n'
        'deny_after = "2h"\n',
        "team.toml",
        PEOPLE,
    )
    assert decide(policy, SESSION, plain("x")).reason == (
        "rule plans (line 1): to person:alice; then role:leads after 10m; then everyone after"
        " 1h; deny after 2h"
    )
    assert NO_RULE.reason == "no rule matched: to everyone, answered only by people"


def test_team_policy_question_facts_read_the_cores_question() -> None:
    allow = ApprovalIntent(kind="approval", approve="Allow", reject="Deny")
    options = (Option("Allow"), Option("Deny"))
    facts = QuestionFacts.of(
        [Question("approval", "Allow Bash?", "`ls`", options=options, intent=allow)]
    )
    assert facts == approval()
    plan = PlanReviewIntent(kind="plan-review", approve="Approve plan")
    facts = QuestionFacts.of([Question("p", "Approve?", "plan", intent=plan)], timed=False)
    assert (facts.kind, facts.approve, facts.reject) == (
        IntentKind.PLAN_REVIEW,
        "Approve plan",
        None,
    )
    facts = QuestionFacts.of(
        [Question("a", "Name?"), Question("b", "Db?", options=(Option("x"),))], timed=True
    )
    assert facts == QuestionFacts(
        IntentKind.PLAIN,
        (AskedQuestion("a", "Name?"), AskedQuestion("b", "Db?", ("x",))),
        timed=True,
    )
