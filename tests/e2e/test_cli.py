"""The command line as a person meets it (protocol.md "Command line"), over real processes.

- `--help`: the top level lists every command with one line; each command has a
  description and lists every flag with its help and default.
- Usage errors are one line naming the command and what to do, status 2: a bad
  `--model` (the accepted forms instead of a pydantic dump; a script's unknown
  key named), a `--log-file` that cannot be opened, an unknown flag.
- Ctrl-C (SIGINT) ends `serve` and `acp` with status 130 and no traceback.
- Started by hand in a terminal (stdin a pty), `serve` and `acp` say on stderr
  what they are for and point to `askbridge demo`, then serve as usual; with a
  pipe on stdin (an editor) they say nothing.
- `askbridge demo --data-dir` on a directory another process holds: one line.
- `make demo` installs the package alone, and quitting the demo (130) is not a
  make error.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from askbridge.cli.parser import build_parser
from askbridge.testing.strict_frames import frame

pytestmark = pytest.mark.timeout(60)
ROOT = Path(__file__).resolve().parents[2]
ASKBRIDGE = [sys.executable, "-m", "askbridge.cli"]
COMMANDS = ["serve", "acp", "demo", "schema"]


def askbridge(
    *args: str, stdin: int | None = subprocess.DEVNULL
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*ASKBRIDGE, *args], stdin=stdin, capture_output=True, text=True, timeout=30
    )


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_top_level_help_lists_every_command_with_one_line() -> None:
    done = askbridge("--help")
    assert done.returncode == 0
    for command in COMMANDS:
        assert re.search(rf"^\s+{command}\s+\S.*$", done.stdout, flags=re.M), done.stdout
    assert "askbridge demo" in flat(done.stdout)


@pytest.mark.parametrize("command", COMMANDS)
def test_every_flag_of_every_command_has_help_and_a_default(command: str) -> None:
    done = askbridge(command, "--help")
    assert done.returncode == 0
    text = flat(done.stdout)
    parser = build_parser()
    [commands] = [a for a in parser._actions if a.dest == "command"]
    sub = commands.choices[command]  # type: ignore[index]
    assert sub.description and flat(sub.description) in text
    for action in sub._actions:
        if action.help == "==SUPPRESS==" or action.dest == "help":
            continue
        flag = action.option_strings[0]
        assert flag in text
        assert action.help and re.search(r"\((default: |required)", action.help), flag
        assert flat(action.help) in text, flag


@pytest.mark.parametrize(
    ("model", "said"),
    [
        ('{"kind": "nope"}', "unknown model kind 'nope'; accepted: "),
        ('{"kind": "openai"}', "model: Field required; accepted: "),
        ('{"model": "x"}', "the spec has no kind; accepted: "),
        ("not json", "--model is not valid JSON"),
        ("script:/no/such/file.json", "cannot read model script '/no/such/file.json'"),
        (
            '{"kind": "script", "steps": [{"txt": "hi"}]}',
            "steps[0]: unknown key 'txt'; expected text, toolCalls",
        ),
        (
            '{"kind": "script", "steps": [{"toolCalls": [{"id": "c", "name": "ask_user_question", '
            '"arguments": {"questions": [{"id": "a", "question": "q", "multiSelect": true}]}}]}]}',
            "steps[0].toolCalls[0].arguments.questions[0]: unknown key 'multiSelect' "
            "(did you mean 'multi_select'?)",
        ),
    ],
)
def test_a_bad_model_is_one_line_that_says_what_is_accepted(model: str, said: str) -> None:
    done = askbridge("serve", "--model", model)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("askbridge serve: error: argument --model: ")
    assert said in done.stderr
    assert "pydantic" not in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("command", ["serve", "acp"])
def test_a_log_file_in_a_missing_directory_is_a_usage_error(command: str, tmp_path: Path) -> None:
    log = tmp_path / "missing" / "askbridge.log"
    done = askbridge(command, "--data-dir", str(tmp_path / "data"), "--log-file", str(log))
    assert done.returncode == 2
    assert done.stderr == (
        f"askbridge {command}: error: cannot open --log-file {log}: No such file or directory; "
        f"see askbridge {command} --help\n"
    )


def test_an_unknown_flag_is_an_error_of_its_command() -> None:
    done = askbridge("acp", "--no-such-flag")
    assert (done.returncode, done.stderr) == (
        2,
        "askbridge acp: error: unrecognized arguments: --no-such-flag; see askbridge acp --help\n",
    )


INITIALIZE = {
    "serve": frame(
        '{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}'
    ),
    "acp": b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}\n',
}


# The console script takes its own path for a plain command line (cli/entry.py, no parser).
CONSOLE_SCRIPT = Path(sys.executable).parent / "askbridge"
PROGRAMS = {"module": ASKBRIDGE, "console-script": [str(CONSOLE_SCRIPT)]}


@pytest.mark.parametrize("program", list(PROGRAMS))
@pytest.mark.parametrize("command", ["serve", "acp"])
def test_ctrl_c_ends_the_server_with_130_and_no_traceback(
    command: str, program: str, tmp_path: Path
) -> None:
    if not os.access(PROGRAMS[program][0], os.X_OK):
        pytest.skip("no console script")
    process = subprocess.Popen(
        [*PROGRAMS[program], command, "--data-dir", str(tmp_path / "data")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(INITIALIZE[command])
        process.stdin.flush()
        assert b'"id":' in process.stdout.read1()  # initialize answered: the server is serving
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=15)
        assert process.returncode == 130
        assert b"Traceback" not in stderr and b"KeyboardInterrupt" not in stderr, stderr
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize("command", ["serve", "acp"])
def test_started_by_hand_in_a_terminal_it_says_what_it_is_for(command: str, tmp_path: Path) -> None:
    """One line on stderr, then it serves (it is still running) until Ctrl-C."""
    master, slave = os.openpty()
    process = subprocess.Popen(
        [*ASKBRIDGE, command, "--data-dir", str(tmp_path / "data")],
        stdin=slave,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    os.close(slave)
    try:
        assert process.stderr is not None
        hint = process.stderr.readline().decode()
        assert hint.startswith(f"askbridge {command} speaks ") and "run `askbridge demo`" in hint
        time.sleep(0.3)
        assert process.poll() is None  # it carries on, waiting for a client
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=15)
    finally:
        os.close(master)
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130
    assert stdout == b"" and stderr == b""


@pytest.mark.parametrize("command", ["serve", "acp"])
def test_started_by_an_editor_it_says_nothing(command: str, tmp_path: Path) -> None:
    done = askbridge(command, "--data-dir", str(tmp_path / "data"))
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


@pytest.mark.inline_only  # with --host auto a second front door attaches (H2)
def test_the_demo_on_a_busy_data_dir_says_so_in_one_line(tmp_path: Path) -> None:
    data = tmp_path / "data"
    holder = subprocess.Popen(
        [*ASKBRIDGE, "serve", "--data-dir", str(data)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert holder.stdin is not None and holder.stdout is not None
        holder.stdin.write(INITIALIZE["serve"])
        holder.stdin.flush()
        holder.stdout.read1()  # answered: the data directory is now held
        done = askbridge("demo", "--auto", "--data-dir", str(data))
    finally:
        holder.kill()
        holder.wait()
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"askbridge demo: data directory {data} is in use by process ")
    assert done.stderr.endswith(  # the command that frees it
        f"; stop it (`askbridge host --stop --data-dir {data}`), or pick another "
        "--data-dir (or none: a temporary one)\n"
    )


def copy_for_make(tmp_path: Path) -> Path:
    tree = tmp_path / "clone"
    tree.mkdir()
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy2(ROOT / name, tree / name)
    return tree


def test_make_demo_installs_the_package_alone(tmp_path: Path) -> None:
    tree = copy_for_make(tmp_path)
    done = subprocess.run(
        ["make", "-n", "demo"], cwd=tree, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    assert "pip install -q -e ." in done.stdout
    assert ".[test]" not in done.stdout


def test_quitting_make_demo_is_not_a_make_error(tmp_path: Path) -> None:
    """The demo exits 130 when the person quits; `make demo` then exits 0, saying nothing."""
    tree = copy_for_make(tmp_path)
    bin_dir = tree / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    fake = bin_dir / "askbridge"  # stands in for the demo a person quit with Ctrl-C
    fake.write_text("#!/bin/sh\nexit 130\n")
    fake.chmod(0o755)
    (tree / ".venv" / ".installed-package").touch()  # newer than pyproject: nothing to install
    master, slave = os.openpty()  # the demo target runs the interactive demo on a terminal
    try:
        done = subprocess.run(
            ["make", "demo"], cwd=tree, stdin=slave, capture_output=True, text=True, timeout=30
        )
    finally:
        os.close(slave)
        os.close(master)
    assert (done.returncode, done.stderr) == (0, "")
