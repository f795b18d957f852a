"""S2: the Neovim plugin folds `userQuestions/didChange` changes exactly as the
reference fold `askbridge.protocol.views.apply_view_changes` does.

Random change sequences (seeded, so a failure reproduces) over a few call ids
and every state — including re-asks, `continued` with questions for an entry
the client lacks (a new subscriber's first notification), changes for unknown
calls and `removed` — are folded by `views.apply_changes` in a real headless
Neovim and by the reference in Python; the views must be equal, and the plugin
must never modify the view it is given. The end-to-end behaviour (the commands
reading the folded copy) is in test_nvim.py and test_nvim_sessions.py.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
from pathlib import Path
from typing import Any

from test_nvim import LUA_DIR, PLUGIN_DIR, RUN_TIMEOUT_S, nvim_binary

from askbridge.protocol.views import apply_view_changes, empty_view

CALLS = ["call-1", "call-2", "call-3", "call-4"]
STATES = ["open", "continued", "settled", "removed"]


def random_change(rng: random.Random) -> dict[str, Any]:
    call_id = rng.choice(CALLS)
    state = rng.choice(STATES)
    change: dict[str, Any] = {"callId": call_id, "state": state}
    questions = [{"id": f"q{rng.randint(1, 9)}", "question": f"Q {call_id} {rng.random():.3f}?"}]
    if rng.random() < 0.3:
        questions[0]["options"] = [{"label": "A"}, {"label": "B", "description": "b"}]
    if state == "open" or (state == "continued" and rng.random() < 0.4):
        change["questions"] = questions
    if state == "settled":
        change["answers"] = [{"id": questions[0]["id"], "selected": rng.choice([[], ["A"]])}]
    return change


def random_cases(seed: int, count: int) -> list[list[list[dict[str, Any]]]]:
    rng = random.Random(seed)
    return [
        [[random_change(rng) for _ in range(rng.randint(1, 4))] for _ in range(rng.randint(1, 8))]
        for _ in range(count)
    ]


def normalized(value: Any) -> Any:
    """JSON with empty objects and empty arrays made alike (Lua cannot tell them apart)."""
    if isinstance(value, dict):
        return {k: normalized(v) for k, v in value.items()} or []
    if isinstance(value, list):
        return [normalized(v) for v in value]
    return value


def fold_in_nvim(tmp_path: Path, cases: list[list[list[dict[str, Any]]]]) -> dict[str, Any]:
    source, target = tmp_path / "cases.json", tmp_path / "views.json"
    source.write_text(json.dumps(cases))
    env = {
        **os.environ,
        "ASKBRIDGE_TEST_PLUGIN": str(PLUGIN_DIR),
        "ASKBRIDGE_FOLD_INPUT": str(source),
        "ASKBRIDGE_FOLD_OUTPUT": str(target),
    }
    nvim = [str(nvim_binary()), "--headless", "--clean", "-u", "NONE"]
    proc = subprocess.run(
        [*nvim, "-c", f"luafile {LUA_DIR / 'fold_views.lua'}"],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )
    output = (proc.stdout + proc.stderr).decode(errors="replace")
    assert proc.returncode == 0 and output.strip() == "", output
    result: dict[str, Any] = json.loads(target.read_text())
    return result


def test_S2_plugin_fold_matches_the_reference_fold(tmp_path: Path) -> None:
    cases = random_cases(seed=20260629, count=300)
    # The protocol README's own example, and a subscriber's first notification.
    cases.append(
        [
            [{"callId": "call-2", "state": "open", "questions": [{"id": "os", "question": "OS?"}]}],
            [{"callId": "call-2", "state": "continued"}],
            [{"callId": "call-1", "state": "settled", "answers": [{"id": "db", "selected": []}]}],
        ]
    )
    cases.append(
        [[{"callId": "call-9", "state": "continued", "questions": [{"id": "a", "question": "A?"}]}]]
    )
    result = fold_in_nvim(tmp_path, cases)

    assert result["mutated"] == 0
    for index, (case, got) in enumerate(zip(cases, result["views"], strict=True)):
        want = empty_view()
        for changes in case:
            want = apply_view_changes(want, changes)
        assert normalized(got) == normalized(want), f"case {index}: {json.dumps(case)}"
