"""The process-wide garbage-collector setting is one call: `tune_gc_for_serving()` in
daemon/gc_tuning.py (whose docstring gives what it buys, measured), called once, by
`serve_host`. Only gcpause.py's `paused_gc` touches the collector besides, for the
length of a bulk fold.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "server" / "askbridge"

SETTINGS = {"freeze", "unfreeze", "set_threshold", "disable", "enable"}


def _calls(path: Path) -> list[str]:
    """`gc.<setting>(…)` and `tune_gc_for_serving(…)` calls in `path`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            if func.value.id == "gc" and func.attr in SETTINGS:
                found.append(f"gc.{func.attr}")
        elif isinstance(func, ast.Name) and func.id == "tune_gc_for_serving":
            found.append(func.id)
    return found


def test_the_collector_is_tuned_in_one_function_called_once() -> None:
    calls = {
        str(path.relative_to(PKG)): calls
        for path in sorted(PKG.rglob("*.py"))
        if (calls := _calls(path))
    }
    assert calls == {
        "daemon/bootstrap.py": ["tune_gc_for_serving"],
        "daemon/gc_tuning.py": ["gc.freeze", "gc.set_threshold"],
        "host/log/gcpause.py": ["gc.disable", "gc.enable"],
    }


def test_tune_gc_for_serving_freezes_the_heap_and_raises_the_young_threshold() -> None:
    child = (
        "import gc; from askbridge.daemon.gc_tuning import tune_gc_for_serving, YOUNG_THRESHOLD\n"
        "before = gc.get_threshold(); tune_gc_for_serving()\n"
        "assert gc.get_threshold() == (YOUNG_THRESHOLD, *before[1:]), gc.get_threshold()\n"
        "assert gc.get_freeze_count() > 0\n"
    )
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
