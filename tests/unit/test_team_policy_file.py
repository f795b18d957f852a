"""R5: a policy file is read whole or refused in one line naming the file and the line.

Each refusal case marks the line it must name with `# <-`: the case is a real
policy of several rules, so a refusal naming the first rule's line, or line 1,
fails. docs/policies.md's example must load as it is written.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from askbridge.host.team.audience import Reach, Target
from askbridge.host.team.facts import IntentKind
from askbridge.host.team.policy_file import PolicyError, load_policy, parse_policy
from askbridge.host.team.toml_lines import key_lines

ROOT = Path(__file__).resolve().parents[2]
PEOPLE = {"alice": ["leads"], "bob": ["leads"], "carol": ["devs"]}
GOOD_FIRST = """\
# a valid rule first, so that a line number counts past it
[[rule]]
name = "first"
match = { agent = "ci-*", kind = ["approval", "plain"] }
route = "role:devs"
"""


def docs_example() -> str:
    text = (ROOT / "docs" / "policies.md").read_text(encoding="utf-8")
    found = re.search(r"```toml\n(.*?)```", text, re.S)
    assert found is not None
    return found.group(1)


def test_team_policy_the_docs_example_loads_as_documented() -> None:
    policy = parse_policy(docs_example(), "team.toml", PEOPLE)
    by_name = {rule.name: rule for rule in policy.rules}
    assert list(by_name) == ["ci-reads", "ci-rest", "deploys", "payments-plans", "nightly"]
    assert by_name["ci-reads"].answer == "Allow"
    assert by_name["ci-rest"].deny_after_ms == 15 * 60_000
    assert by_name["ci-rest"].route == Target(Reach.ROLE, "leads")
    deploys = by_name["deploys"]
    assert (deploys.quorum and str(deploys.quorum)) == "2 of role:leads"
    assert deploys.quorum.members == {"alice", "bob"}
    assert deploys.route == Target(Reach.ROLE, "leads")  # a quorum's audience is its role
    assert deploys.match.kinds == {IntentKind.APPROVAL}
    plans = by_name["payments-plans"]
    assert [(s.after_ms, str(s.target)) for s in plans.escalate] == [
        (600_000, "role:leads"),
        (3_600_000, "everyone"),
    ]
    assert by_name["nightly"].pending
    # Each rule's line is its [[rule]] header's.
    lines = docs_example().splitlines()
    assert all(lines[rule.line - 1] == "[[rule]]" for rule in policy.rules)


REFUSALS: list[tuple[str, str, str]] = [
    # (case id, policy text with `# <-` on the line to name, message part). The text goes after
    # GOOD_FIRST, but a text for the top level (no [[rule]] in it) goes before it.
    ("syntax", '[[rule]]\nname = "a  # <-\n', "TOML syntax: Illegal character"),
    ("syntax-line", '[[rule]]\nname = "a"\nroute = everyone  # <-\n', "TOML syntax: Invalid"),
    ("unknown-top", 'version = 2  # <-\n', 'team.toml:1: unknown field "version" (a policy is'),
    ("unknown-rule-field", '[[rule]]\nname = "a"\nroutes = "everyone"  # <-\n',
     'rule "a": unknown field "routes" (fields: name, match'),
    ("unknown-match-field", '[[rule]]\nname = "a"\nroute = "everyone"\n[rule.match]\n'
     'kind = "plain"\ndirectory = "/x"  # <-\n', 'match: unknown field "directory"'),
    ("unknown-step-field", '[[rule]]\nname = "a"\nroute = "person:carol"\nescalate = [\n'
     '  { after = "1m", to = "role:leads" },\n  { after = "2m", to = "everyone", why = 1 },  # <-\n'
     ']\n', 'escalate: unknown field "why"'),
    ("name-type", '[[rule]]\nname = 3  # <-\nroute = "everyone"\n', "name must be a string, not an integer"),
    ("name-missing", '[[rule]]  # <-\nroute = "everyone"\n', "rule 2 has no name"),
    ("name-spelling", '[[rule]]\nname = "no spaces"  # <-\nroute = "everyone"\n', "a name is 1-64"),
    ("name-twice", '[[rule]]\nname = "first"  # <-\nroute = "everyone"\n', "named twice (first on line 2)"),
    ("does-nothing", '[[rule]]  # <-\nname = "a"\nmatch = { kind = "plain" }\n', "does nothing"),
    ("match-type", '[[rule]]\nname = "a"\nroute = "everyone"\nmatch = "plain"  # <-\n', "match must be a table, not a string"),
    ("glob-type", '[[rule]]\nname = "a"\nroute = "everyone"\nmatch.agent = 3  # <-\n', "agent must be a string or an array of strings, not an integer"),
    ("glob-empty", '[[rule]]\nname = "a"\nroute = "everyone"\nmatch.cwd = []  # <-\n', "empty array"),
    ("kind-item-type", '[[rule]]\nname = "a"\nroute = "everyone"\n[rule.match]\nkind = [\n  "approval",\n'
     '  3,  # <-\n]\n', "item 2 is an integer"),
    ("kind-unknown", '[[rule]]\nname = "a"\nroute = "everyone"\n[rule.match]\nkind = "question"  # <-\n',
     'kind "question" is not one of approval, plan-review, plain'),
    ("regex", '[[rule]]\nname = "a"\nroute = "everyone"\n[rule.match]\ntext = \'(unclosed\'  # <-\n',
     "text is not a valid regex: missing ), unterminated subpattern"),
    ("route-type", '[[rule]]\nname = "a"\nroute = 1  # <-\n', "route must be a string, not an integer"),
    ("route-spelling", '[[rule]]\nname = "a"\nroute = "leads"  # <-\n', 'must be "everyone", "person:NAME" or "role:NAME"'),
    ("route-role-nobody-has", '[[rule]]\nname = "a"\nroute = "role:ops"  # <-\n', 'nobody has the role "ops"'),
    ("route-unknown-person", '[[rule]]\nname = "a"\nroute = "person:zed"  # <-\n', 'no person is named "zed"'),
    ("escalate-role-nobody-has", '[[rule]]\nname = "a"\nroute = "person:carol"\nescalate = [\n'
     '  { after = "1m", to = "role:ops" },  # <-\n]\n', 'nobody has the role "ops"'),
    ("escalate-not-wider", '[[rule]]\nname = "a"\nroute = "role:devs"\n'
     'escalate = [{ after = "1m", to = "person:alice" }]  # <-\n', "not wider than role:devs"),
    ("escalate-not-later", '[[rule]]\nname = "a"\nroute = "person:carol"\nescalate = [\n'
     '  { after = "10m", to = "role:leads" },\n  { after = "5m", to = "everyone" },  # <-\n]\n',
     "step 2 is not later"),
    ("escalate-from-everyone", '[[rule]]\nname = "a"\nroute = "everyone"\n'
     'escalate = [{ after = "1m", to = "everyone" }]  # <-\n', "needs a route narrower than everyone"),
    ("escalate-type", '[[rule]]\nname = "a"\nroute = "person:carol"\nescalate = "10m"  # <-\n', "escalate must be an array"),
    ("duration-bare-number", '[[rule]]\nname = "a"\nroute = "everyone"\ndeny_after = "15"  # <-\n',
     'deny_after "15" is not a duration like "90s"'),
    ("duration-type", '[[rule]]\nname = "a"\nroute = "everyone"\ndeny_after = 15  # <-\n', "deny_after must be a duration string"),
    ("duration-zero", '[[rule]]\nname = "a"\nroute = "everyone"\ndeny_after = "0s"  # <-\n', "must be longer than 0"),
    ("duration-too-long", '[[rule]]\nname = "a"\nroute = "everyone"\ndeny_after = "25d"  # <-\n', "longer than 2147483647 ms"),
    ("step-duration", '[[rule]]\nname = "a"\nroute = "person:carol"\nescalate = [\n'
     '  { after = "ten minutes", to = "everyone" },  # <-\n]\n', 'after "ten minutes" is not a duration'),
    ("quorum-larger-than-role", '[[rule]]\nname = "a"\nmatch.kind = "approval"\nquorum = "3 of role:leads"  # <-\n',
     'quorum "3 of role:leads": the role "leads" has 2 people'),
    ("quorum-zero", '[[rule]]\nname = "a"\nmatch.kind = "approval"\nquorum = "0 of role:leads"  # <-\n', "has 2 people"),
    ("quorum-role-nobody-has", '[[rule]]\nname = "a"\nmatch.kind = "approval"\nquorum = "1 of role:ops"  # <-\n',
     'quorum: nobody has the role "ops"'),
    ("quorum-spelling", '[[rule]]\nname = "a"\nmatch.kind = "approval"\nquorum = "two leads"  # <-\n', 'is not like "2 of role:leads"'),
    ("quorum-type", '[[rule]]\nname = "a"\nmatch.kind = "approval"\nquorum = 2  # <-\n', "quorum must be a string"),
    ("quorum-not-approval", '[[rule]]\nname = "a"\nmatch.kind = ["approval", "plain"]\nquorum = "2 of role:leads"  # <-\n',
     'must match kind = "approval" only'),
    ("quorum-with-route", '[[rule]]\nname = "a"\nmatch.kind = "approval"\nquorum = "2 of role:leads"\n'
     'route = "everyone"  # <-\n', "quorum cannot go with route"),
    ("answer-with-deny", '[[rule]]\nname = "a"\nanswer = "Allow"\ndeny_after = "1m"  # <-\n', "answer cannot go with deny_after"),
    ("answer-type", '[[rule]]\nname = "a"\nanswer = true  # <-\n', "answer must be a string"),
    ("answer-empty", '[[rule]]\nname = "a"\nanswer = ""  # <-\n', "answer is empty"),
    ("pending-type", '[[rule]]\nname = "a"\npending = "yes"  # <-\n', "pending must be true or false, not a string"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "expected"), [(t, e) for _, t, e in REFUSALS],
                         ids=[c for c, _, _ in REFUSALS])  # fmt: skip
def test_team_policy_a_bad_policy_is_refused_in_one_line_naming_its_line(
    text: str, expected: str
) -> None:
    document = GOOD_FIRST + text if "[[rule]]" in text else text + GOOD_FIRST
    marked = [i + 1 for i, line in enumerate(document.splitlines()) if "# <-" in line]
    assert len(marked) == 1
    with pytest.raises(PolicyError) as refused:
        parse_policy(document, "team.toml", PEOPLE)
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith(f"team.toml:{marked[0]}: "), message
    assert expected in message, message


@pytest.mark.parametrize("text", ["# rules\nrule = 1\n", '\n[rule]\nname = "a"\n'])
def test_team_policy_rules_that_are_not_an_array_of_tables_are_refused(text: str) -> None:
    with pytest.raises(PolicyError, match=r"^team\.toml:2: rule must be an array of tables"):
        parse_policy(text, "team.toml", PEOPLE)


def test_team_policy_load_names_the_file_when_it_cannot_be_read(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match=r"^.*missing\.toml: cannot read the policy: No such"):
        load_policy(tmp_path / "missing.toml", PEOPLE)
    latin1 = tmp_path / "latin1.toml"
    latin1.write_bytes(b'[[rule]]\nname = "caf\xe9"\n')
    with pytest.raises(PolicyError, match=r"latin1\.toml:2: the policy is not UTF-8 text$"):
        load_policy(latin1, PEOPLE)


def test_team_policy_a_refusal_shows_what_could_drive_a_terminal_as_text() -> None:
    """S17: a field name or a value from the file is quoted, its controls spelled out."""
    with pytest.raises(PolicyError) as refused:
        parse_policy('[[rule]]\nname = "a"\n"x\\u001b[2J\\u202e" = 1\n', "team.toml", PEOPLE)
    message = str(refused.value)
    assert "\x1b" not in message and "\u202e" not in message
    assert '"x<U+001B>[2J<U+202E>"' in message and message.startswith("team.toml:3: ")


def test_team_policy_load_reads_a_file(tmp_path: Path) -> None:
    path = tmp_path / "team.toml"
    path.write_text(docs_example(), encoding="utf-8")
    assert [r.name for r in load_policy(path, PEOPLE).rules][:2] == ["ci-reads", "ci-rest"]
    empty = tmp_path / "empty.toml"
    empty.write_text("# no rules yet\n", encoding="utf-8")
    assert load_policy(empty, PEOPLE).rules == ()


KEYS_DOCUMENT = '''\
[[rule]]
name = "a"   # name
"quoted.key" = 1
desc = """
text = "not a key"
"""
other.kind = "x"
escalate = [
  { after = "1m", to = "role:x" },
  'literal',
]
[rule.match]
text = 'y'
[[rule]]
name = "b"
'''


def test_team_policy_key_lines_names_each_keys_own_line() -> None:
    tomllib.loads(KEYS_DOCUMENT)  # a valid document, as key_lines expects
    lines = key_lines(KEYS_DOCUMENT)
    assert lines[("rule", 0)] == 1
    assert lines[("rule", 0, "name")] == 2
    assert lines[("rule", 0, "quoted.key")] == 3
    assert lines[("rule", 0, "desc")] == 4
    assert ("rule", 0, "text") not in lines  # inside a multi-line string
    assert lines[("rule", 0, "other")] == 7 and lines[("rule", 0, "other", "kind")] == 7
    assert lines[("rule", 0, "escalate", 0, "to")] == 9
    assert lines[("rule", 0, "escalate", 1)] == 10
    assert lines[("rule", 0, "match", "text")] == 13
    assert lines[("rule", 1)] == 14 and lines[("rule", 1, "name")] == 15
