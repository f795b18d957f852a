"""`askbridge demo`: the Quick start, run as a real subprocess (itself running `askbridge serve`).

- `--auto` plays the whole session by itself and exits 0; its transcript shows
  every stage in order (V4 custom answers, TW5/C3 claim, TW6 pending, V7
  `continued`, L4 late reply waking an `inbox` turn).
- The interactive demo is driven through a pseudo-terminal: the test types
  answers into the real prompt_toolkit prompts, including a wrong entry the
  prompt refuses, a claim taken by the first keystroke, and a late answer.
- The typed-text → answer-item mapping (V4, V8) is checked directly.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import select
import stat
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
from e2e_scripts import running_host

from askbridge.demo.answers import answer_item, parse_choice
from askbridge.protocol.vocabulary import Option, QuestionItem

DEMO = [sys.executable, "-m", "askbridge.cli", "demo"]
ANSI = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][0-9A-Za-z]|[=>78])")


def squash(text: str) -> str:
    """Text without escape sequences or whitespace: a terminal may move the cursor instead
    of writing spaces, and rich wraps long lines, so matches ignore both."""
    return re.sub(r"\s+", "", ANSI.sub("", text))


def assert_in_order(output: str, *needles: str) -> None:
    flat, at = squash(output), 0
    for needle in needles:
        found = flat.find(squash(needle), at)
        assert found >= 0, f"{needle!r} missing (or out of order) in:\n{output}"
        at = found + len(squash(needle))


def test_auto_demo_shows_every_stage_and_exits_0(tmp_path: Path) -> None:
    """V4/V8 answers, TW5/C3 claim, TW6 pending + V7 continued, L4 late reply → inbox turn."""
    env = {**os.environ, "COLUMNS": "70"}  # narrow: results wrap (between words, below)
    done = subprocess.run(
        [*DEMO, "--auto", "--data-dir", str(tmp_path / "data")],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
        env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert_in_order(
        done.stdout,
        f"data dir: {tmp_path / 'data'}",
        "turn t-1 started · cause: prompt",
        # an answered question with options
        'the model receives: {"answers":[{"id":"language","selected":["Python (Recommended)"]}]}',
        # multi-select with custom text beside the picked labels (V4)
        '{"answers":[{"id":"extras","selected":["CI","Pre-commit hooks"],"custom":"Renovate bot"}]}',
        # the timed question, claimed before answering (TW5, C3), the claim ending with it
        "⏸ claimed the wait (userQuestions/attachWait)",
        '{"answers":[{"id":"name","selected":["order-service"]}]}',
        "claim released",
        # the question left to time out: card closed, pending result, view continued (TW6, V7)
        "⌛ the server's clock ran out",
        "call-license is now continued",
        '[pending] the model receives: {"pending":true,"callId":"call-license"',
        "turn t-1 ended: end_turn",
        # answered late: accepted, settled, admitted into a new turn woken by the inbox (L4)
        "userQuestions/answer → accepted",
        'call-license is now settled with [{"id": "license", "selected": ["Apache-2.0"]}]',
        "turn t-2 started · cause: inbox",
        '✉ late reply admitted as a user message (call-license, answered): {"kind":"answer_to_pending_question"',
        "agent › Your license answer just arrived as a late reply",
        "turn t-2 ended: end_turn",
    )
    # Issue 18 item 7: a result's JSON wraps between words, never inside one: its lines,
    # joined by spaces, are the JSON the model received.
    lines = ANSI.sub("", done.stdout).splitlines()
    at = next(i for i, line in enumerate(lines) if "the model receives: " in line)
    parts = [lines[at].split("the model receives: ", 1)[1]]
    indent = lines[at].index("the model receives: ") + len("the model receives: ")
    for line in lines[at + 1 :]:
        if not line[:indent].isspace() or not line.strip():
            break
        parts.append(line.strip())
    # Wrapped by the demo, not by the terminal (which breaks anywhere, mid-token).
    assert all(len(line.rstrip()) <= 70 for line in lines[at : at + len(parts)])
    joined = " ".join(part.strip() for part in parts if part.strip())
    received = json.dumps(json.loads(joined), separators=(",", ":"))
    assert received == '{"answers":[{"id":"language","selected":["Python (Recommended)"]}]}'
    # The admitted late reply and the view's lines wrap between words too, never inside
    # one (a terminal breaks a line it is handed anywhere: "say\ns what it serves").
    at = next(i for i, line in enumerate(lines) if "✉" in line)
    reply = [lines[at]]
    for line in lines[at + 1 :]:
        if not line.startswith("    ") or not line.strip():
            break
        reply.append(line)
    assert all(len(line.rstrip()) <= 70 for line in reply), reply
    said = " ".join(line.strip() for line in reply)
    assert '"description": "Permissive, with a patent grant"' in said, said
    assert all(len(line.rstrip()) <= 70 for line in lines if "question view" in line)
    # S5: the demo's data directory is private; S12: one host.log, in the server's format,
    # holds the server's lines and the demo client's.
    data = tmp_path / "data"
    assert stat.S_IMODE(os.stat(data).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(data / "host.log").st_mode) == 0o600
    assert not (data / "server.log").exists() and not (data / "demo.log").exists()
    log = (data / "host.log").read_text().splitlines()
    assert log and all(re.match(r"\d{4}-\d\d-\d\d [\d:,]+ [A-Z]+ [\w.]+: ", line) for line in log)
    assert any(" askbridge.daemon: " in line for line in log)


def test_demo_on_a_data_dir_in_use_names_the_stop_command(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with running_host(data):
        done = subprocess.run(
            [*DEMO, "--auto", "--data-dir", str(data)],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 1
    assert f"`askbridge host --stop --data-dir {data}`" in done.stderr


def test_auto_demo_without_a_data_dir_leaves_no_temp_dir_behind(tmp_path: Path) -> None:
    """The session lives in a temporary directory; the demo removes it and says how to keep one."""
    env = {**os.environ, "COLUMNS": "100", "TMPDIR": str(tmp_path)}
    done = subprocess.run(
        [*DEMO, "--auto"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
        env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (
        f"data dir: {tmp_path}/askbridge-demo-" in squash(done.stdout)
        or "askbridge-demo-" in done.stdout
    )
    assert "removed now; askbridge demo --data-dir DIR keeps it." in " ".join(done.stdout.split())
    assert list(tmp_path.iterdir()) == []


class PtyDemo:
    """`askbridge demo` on a pseudo-terminal: `expect` reads the screen output, `type` keys."""

    def __init__(self, data_dir: Path, command: list[str] | None = None) -> None:
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 120, 0, 0))
        env = {**os.environ, "TERM": "xterm-256color", "PROMPT_TOOLKIT_NO_CPR": "1"}
        env.pop("COLUMNS", None)
        env.pop("LINES", None)
        self.process = subprocess.Popen(
            [*(command or DEMO), "--data-dir", str(data_dir)],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            start_new_session=True,
        )
        os.close(slave)
        self.output = ""
        self._seen = 0  # `expect` matches only text after the previous match

    def _read(self, timeout: float) -> None:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if ready:
            try:
                self.output += os.read(self.master, 65536).decode("utf-8", "replace")
            except OSError:  # EIO: the child closed the terminal
                time.sleep(timeout)

    def expect(self, needle: str, timeout: float = 10) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = squash(self.output).find(squash(needle), self._seen)
            if found >= 0:
                self._seen = found + len(squash(needle))
                return
            self._read(0.05)
        pytest.fail(f"{needle!r} did not appear; the terminal showed:\n{ANSI.sub('', self.output)}")

    def type(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def finish(self, timeout: float = 10) -> int:
        deadline = time.monotonic() + timeout
        while self.process.poll() is None and time.monotonic() < deadline:
            self._read(0.05)
        self._read(0.05)
        return self.process.wait(timeout=1)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        os.close(self.master)


def test_interactive_demo_through_a_pty(tmp_path: Path) -> None:
    """A person at a terminal: V4 custom answers, TW5/C3 claim at the first keystroke,
    TW6 pending, L4 late answer waking an inbox turn."""
    demo = PtyDemo(tmp_path / "data")
    try:
        demo.expect("choose a number 1-4 ›")
        demo.type("9\r")  # not an option: the prompt refuses it and asks again
        demo.expect("Use numbers from 1 to 4 only.")
        demo.type("4\r")  # Other: the refused "9" is gone, so this is not read as "94"
        demo.expect("Other ›")
        demo.type("Rust\r")
        demo.expect('{"answers":[{"id":"language","selected":[],"custom":"Rust"}]}')

        demo.expect("choose numbers 1-4")
        demo.type("2,4\r")
        demo.expect("Other ›")
        demo.type("Renovate\r")
        demo.expect('{"answers":[{"id":"extras","selected":["Docker"],"custom":"Renovate"}]}')

        demo.expect("s left on the server's clock · typing stops it")  # the live countdown
        demo.expect("choose a number 1-3 ›")
        demo.type("1")
        # The countdown line turns into the claim notice. prompt_toolkit redraws only the
        # cells that change, so look for the tail, which lies past the old line's end.
        demo.expect("s were left)")
        demo.type("\r")
        demo.expect("⏸ claimed the wait (userQuestions/attachWait) at the first keystroke")
        demo.expect('{"answers":[{"id":"name","selected":["orders-api"]}]}')

        demo.expect("4 of 4: let this one time out")
        demo.expect("s left on the server's clock")
        demo.type("2")  # a key on the question left to time out is answered with a word
        demo.expect("Not this one: let it time out.")
        demo.expect("⌛ the server's clock ran out", timeout=15)
        demo.expect("call-license is now continued")
        demo.expect("Answering late")
        demo.expect("choose a number 1-4 ›")
        demo.type("1\r")
        demo.expect("userQuestions/answer → accepted")
        demo.expect("turn t-2 started · cause: inbox")
        demo.expect('"answers":[{"id":"license","selected":["MIT"]}]')
        demo.expect("agent › Your license answer just arrived")
        # The outro tells what this person did, not a fixed story.
        demo.expect("1 of 4: options with descriptions: you answered your own text “Rust”.")
        demo.expect("Your first keystroke on call-name claimed its wait")
        demo.expect("call-license reached its deadline unanswered")
        demo.expect("Your late answer to call-license went to the agent's inbox")
        assert demo.finish() == 0, ANSI.sub("", demo.output)
    finally:
        demo.close()


LICENSE = QuestionItem(
    id="license", question="Which?", options=[Option(label="MIT"), Option(label="Apache-2.0")]
)
EXTRAS = LICENSE.model_copy(update={"id": "extras", "multi_select": True})


@pytest.mark.parametrize(
    ("question", "typed", "custom", "item"),
    [
        (LICENSE, "2", None, {"id": "license", "selected": ["Apache-2.0"]}),
        # V4: single-select custom replaces the choice
        (LICENSE, "3", "BSD", {"id": "license", "selected": [], "custom": "BSD"}),
        # V4: multi-select custom accompanies the selection; duplicates collapse
        (
            EXTRAS,
            "2, 1 3 1",
            "x",
            {"id": "extras", "selected": ["MIT", "Apache-2.0"], "custom": "x"},
        ),
        # V4: an empty multi-select answer is a skipped question
        (EXTRAS, "", None, {"id": "extras", "selected": []}),
    ],
)
def test_typed_choices_become_v4_answer_items(
    question: QuestionItem, typed: str, custom: str | None, item: dict[str, object]
) -> None:
    choice = parse_choice(typed, question)
    assert choice.other == (custom is not None)
    assert answer_item(question, choice, custom) == item


@pytest.mark.parametrize(
    ("question", "typed", "message"),
    [
        (LICENSE, "", "Type a number from 1 to 3."),
        (LICENSE, "4", "Use numbers from 1 to 3 only."),
        (LICENSE, "MIT", "Use numbers from 1 to 3 only."),
        (LICENSE, "1,2", "Pick one option only."),
    ],
)
def test_typed_choices_outside_the_menu_are_refused_v8(
    question: QuestionItem, typed: str, message: str
) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_choice(typed, question)


def test_ctrl_c_at_a_prompt_cancels_the_turn_and_exits_130(tmp_path: Path) -> None:
    """Ctrl-C at a card: session/cancel ends the turn (A9: ASK_ABORTED or the user's
    ASK_CANCELLED, whichever the server saw first), no further card is shown, exit 130."""
    demo = PtyDemo(tmp_path / "data")
    try:
        demo.expect("choose a number 1-4 ›")
        demo.type("\x03")
        demo.expect("turn t-1 ended: cancelled")
        demo.expect("demo stopped.")
        assert demo.finish() == 130, ANSI.sub("", demo.output)
        assert "2 of 4" not in ANSI.sub("", demo.output)
    finally:
        demo.close()


# The demo as `askbridge demo` runs it (run_demo, a person at a pty), its script's timed
# questions given 2 s instead of 30 s and 5 s: a test watches them run out without waiting.
SHORT_CLOCKS = """
import sys
import askbridge.demo as demo
script = demo.load_script()
for step in script["steps"]:
    for call in step.get("toolCalls", []):
        if call["arguments"].get("timeout", -1) > 0:
            call["arguments"]["timeout"] = 2
demo.load_script = lambda: script
sys.exit(demo.run_demo(False, sys.argv[2]))
"""


def test_demo_with_question_3_left_to_expire_tells_what_happened(tmp_path: Path) -> None:
    """TW6 on two questions: question 3's clock runs out too. Each "clock ran out" line is
    printed once, under its own question; the agent's late turns speak of the answer that
    woke each of them; the outro tells both pending questions."""
    demo = PtyDemo(tmp_path / "data", [sys.executable, "-c", SHORT_CLOCKS])
    try:
        demo.expect("choose a number 1-4 ›")
        demo.type("1\r")
        demo.expect("choose numbers 1-4")
        demo.type("2\r")
        demo.expect("3 of 4: a timed question")
        demo.expect("choose a number 1-3 ›")  # and no key: the clock runs out
        demo.expect("Answering late: call-license", timeout=20)
        demo.expect("choose a number 1-4 ›")
        demo.type("1\r")
        demo.expect("Answering late: call-name")
        demo.expect("choose a number 1-3 ›")
        demo.type("2\r")
        assert demo.finish(timeout=20) == 0, ANSI.sub("", demo.output)
    finally:
        demo.close()
    ran_out = "⌛ the server's clock ran out"
    assert squash(demo.output).count(squash(ran_out)) == 2, ANSI.sub("", demo.output)
    assert_in_order(
        demo.output,
        "3 of 4: a timed question",
        ran_out,
        "call-name is now continued",
        "4 of 4: let this one time out",
        ran_out,
        "call-license is now continued",
        "agent › I have scaffolded what I could.",
        "turn t-1 ended: end_turn",
        "Answering late: call-license",
        "late reply admitted as a user message (call-license, answered)",
        "agent › Your license answer just arrived",
        "Answering late: call-name",
        "late reply admitted as a user message (call-name, answered)",
        "agent › Your answer on the name arrived late too",
        "call-name reached its deadline unanswered",
        "call-license reached its deadline unanswered",
        "Your late answer to call-license went to the agent's inbox",
        "Your late answer to call-name went to the agent's inbox",
    )
