"""The golden transcripts replayed against the VS Code extension's question handler.

editors/vscode/test/transcripts.test.ts runs under node's test runner: the
extension's QuestionHandler, ContinuedQuestions and SessionClient on a
vscode-jsonrpc connection to tests/editors/transcript_player.py, which plays
each transcript's server side and checks the client's messages (no askbridge
server runs). Replayed: blocking-ask (A7, T3, V8), multi-select-custom (V2,
V4, V8), session-cancel-during-ask (A9), timed-claim (TW4, C3, P2; the claim
release after the reply is the one allowed extra, C4/TW5), pending-late-reply
without its ask exchange (L1, L4, V7). generic-client-fallback and errors are
left out by design (see the .ts file's docstring).

Like tests/editors/test_vscode_logic.py (whose `compiled` fixture installs
and compiles the extension), a missing node/npm fails the test; it never skips.
"""

from __future__ import annotations

import os
import re
import sys

import pytest
from test_vscode_logic import _run, compiled  # noqa: F401 (compiled: a fixture)

TRANSCRIPTS_TEST = "out/test/transcripts.test.js"


@pytest.mark.timeout(600)
@pytest.mark.usefixtures("compiled")
def test_vscode_question_handler_replays_the_golden_transcripts_A9_C3_V4_L4() -> None:
    """A7, T3, V2, V4, V8, A9, TW4, C3, C4, P2, L1, L4, V7: every replayable transcript."""
    env = {**os.environ, "ASKBRIDGE_PYTHON": sys.executable}
    output = _run(
        ["node", "--test", "--test-reporter=spec", TRANSCRIPTS_TEST], timeout=300, env=env
    )
    passed = re.search(r"^ℹ pass (\d+)$", output, re.M)
    failed = re.search(r"^ℹ fail (\d+)$", output, re.M)
    assert passed and failed, f"no node test summary in:\n{output[-4000:]}"
    assert failed.group(1) == "0", output[-8000:]
    assert int(passed.group(1)) == 5, output[-4000:]
