"""`make bench` says MET or MISSED on every target line, next to the figure the target is about.

Issue 18 item 7: the fold line printed the fold's rate against its baseline (0.071x)
next to an absolute target (≥ 1M events/s) it met. benchmarks/_targets.py formats
every target; this checks its verdicts and that no benchmark writes a target by hand.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

from _targets import against, verdict  # noqa: E402  (benchmarks/ is not a package)


@pytest.mark.parametrize(
    ("value", "op", "bound", "expected"),
    [
        (1.5, "<=", 2, "MET"),
        (2.0, "<=", 2, "MET"),
        (2.01, "<=", 2, "MISSED"),
        (0.2, ">=", 0.15, "MET"),
        (0.15, ">=", 0.15, "MET"),
        (0.061, ">=", 0.15, "MISSED"),
    ],
)
def test_verdict_follows_the_targets_direction(
    value: float, op: str, bound: float, expected: str
) -> None:
    assert verdict(value, op, bound) == expected


def test_an_absolute_target_prints_the_measured_value_in_its_unit() -> None:
    # The fold at 1.02M events/s meets ≥ 1M events/s, whatever its baseline's rate.
    assert against(1.02, ">=", 1, "M events/s") == "1.02M events/s (target >= 1M events/s) MET"
    assert against(0.7, ">=", 1, "M events/s") == "0.70M events/s (target >= 1M events/s) MISSED"
    assert against(17316, "<=", 2048, " B/question", digits=0) == (
        "17316 B/question (target <= 2048 B/question) MISSED"
    )


def test_a_ratio_is_judged_unrounded() -> None:
    assert against(1.104, "<=", 1.1) == "1.10x (target <= 1.1x) MISSED"


def test_an_unknown_comparison_is_refused() -> None:
    with pytest.raises(ValueError):
        verdict(1, "<", 2)


def test_every_benchmark_formats_its_targets_with_against() -> None:
    """A target written by hand (`(target <= …)` in the source) would print no verdict."""
    scripts = sorted(BENCHMARKS.glob("bench_*.py"))
    assert scripts
    for script in scripts:
        source = script.read_text()
        code = source.split('"""', 2)[2]  # after the docstring, whose examples show lines
        by_hand = re.findall(r"\(target [<>]=[^)]*\)", code)
        assert by_hand == [], f"{script.name} prints a target without a verdict: {by_hand}"
        assert "against(" in code, f"{script.name} prints no target through against()"
        # Each docstring example of a target line shows its verdict too.
        for line in source.split('"""', 2)[1].splitlines():
            if re.search(r"\(target [<>]=", line):
                assert re.search(r"\(target [<>]=[^)]*\) (MET|MISSED)", line), (
                    f"{script.name}: {line.strip()}"
                )
