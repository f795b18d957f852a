"""docs/rules.md states every rule id the project cites, one grep away.

Ids are the behaviour rules' (V, E, W, A, TW, C, L, P, T, D, H, M, X, S, F, B, G, R with a
number) and the ACP door's (`ACP-q1`, `ACP-load`, …). Every id cited in the
server, the tests, the editors, the benchmarks or the READMEs must be defined in
docs/rules.md as a `**ID**` entry, and each entry is defined once.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "docs" / "rules.md"
RULE_ID = re.compile(r"\b(?:TW|[VEWACLPTDHMXSFBGR])\d{1,2}\b|\bACP-(?:q\d|[a-z]+)\b")
NOT_IDS = {"ACP-shaped"}  # "ACP-shaped methods": a phrase, not a rule
SOURCES = [
    "server",
    "tests",
    "benchmarks",
    "editors/nvim",
    "editors/vscode/src",
    "editors/vscode/test",
]
SUFFIXES = {".py", ".lua", ".ts", ".md"}


def defined() -> Counter[str]:
    return Counter(re.findall(r"^- \*\*([A-Z][A-Za-z0-9-]*)\*\*", RULES.read_text(), flags=re.M))


def cited() -> dict[str, Path]:
    found: dict[str, Path] = {}
    files = [ROOT / "README.md", ROOT / "protocol" / "README.md"]
    for top in SOURCES:
        files += [p for p in (ROOT / top).rglob("*") if p.suffix in SUFFIXES]
    for path in files:
        if "node_modules" in path.parts or path == Path(__file__):
            continue
        for rule in RULE_ID.findall(path.read_text(encoding="utf-8", errors="replace")):
            found.setdefault(rule, path)
    return {rule: path for rule, path in found.items() if rule not in NOT_IDS}


def test_every_cited_rule_id_is_in_docs_rules_md() -> None:
    known = defined()
    missing = {
        rule: str(path.relative_to(ROOT)) for rule, path in cited().items() if rule not in known
    }
    assert not missing, f"rule ids cited but not in docs/rules.md: {missing}"


def test_every_rule_is_stated_once_and_every_family_is_complete() -> None:
    known = defined()
    assert [rule for rule, n in known.items() if n > 1] == []
    for family, last in {"V": 8, "E": 3, "W": 4, "A": 9, "TW": 10, "C": 5, "L": 7, "P": 7,
                         "T": 8, "D": 2, "H": 8, "M": 7, "X": 6, "S": 12, "F": 4,
                         "B": 9, "G": 9, "R": 7}.items():  # fmt: skip
        assert {f"{family}{n}" for n in range(1, last + 1)} <= set(known), family
