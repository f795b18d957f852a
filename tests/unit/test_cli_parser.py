"""cli/parser.py: a command line that names a command is parsed by that command's parser
alone (the start-up of `askbridge serve --host inline`, benchmarks/bench_bridge_startup.py),
and that changes nothing: the same values, the same `--help`, the same one-line errors
as the whole parser's (protocol.md "Command line")."""

from __future__ import annotations

import argparse
import contextlib
import io
from collections.abc import Callable

import pytest

from askbridge.cli import parser as cli_parser
from askbridge.cli.parser import COMMANDS, build_parser, parse_args

COMMAND_LINES = [
    ["serve"],
    ["serve", "--data-dir", "d", "--host", "inline"],
    ["serve", "--ask-mode", "timed", "--ask-timeout", "30", "--max-turn-requests", "5"],
    ["serve", "--model", '{"kind": "openai", "model": "m"}', "--log-level", "debug", "--stdio"],
    ["acp", "--data-dir=d", "--idle-exit", "2.5"],
    ["mcp", "--ask-timeout", "-1", "--host", "auto"],
    ["host", "--status"],
    ["host", "--idle-exit", "1", "--log-file", "x.log"],
    ["demo", "--auto"],
    ["demo", "--web", "--listen", "127.0.0.1:0"],
    ["schema", "--out", "o"],
    ["sessions"],
    ["sessions", "show", "abc"],
    ["web", "--data-dir", "d"],
]

BAD_COMMAND_LINES = [
    ["serve", "--ask-timeout", "0"],
    ["serve", "--host", "bogus"],
    ["serve", "--no-such-flag"],
    ["mcp", "--model", "{}"],
    ["host", "--status", "--stop"],
    ["schema"],
    ["bogus"],
    [],
]


@pytest.fixture
def whole_parse(monkeypatch: pytest.MonkeyPatch) -> Callable[[list[str]], argparse.Namespace]:
    """`parse_args` as it was: the whole parser for every command line."""
    build = cli_parser._build

    def parse(argv: list[str]) -> argparse.Namespace:
        with monkeypatch.context() as patch:
            patch.setattr(cli_parser, "_build", lambda command=None: build(None))
            return parse_args(argv)

    return parse


def _outcome(parse: Callable[[list[str]], object], argv: list[str]) -> tuple[object, str, str]:
    """(exit status, stdout, stderr) of a parse that exits (an error, `--help`)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        with pytest.raises(SystemExit) as exited:
            parse(argv)
    return exited.value.code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("argv", COMMAND_LINES, ids=" ".join)
def test_command_line_one_command_parser_gives_the_whole_parsers_values(
    argv: list[str], whole_parse: Callable[[list[str]], argparse.Namespace]
) -> None:
    assert parse_args(argv) == whole_parse(argv)


@pytest.mark.parametrize("command", list(COMMANDS))
def test_command_line_help_of_a_command_is_the_whole_parsers(
    command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "100")  # the same width for both
    help_alone = _outcome(parse_args, [command, "--help"])
    assert help_alone == _outcome(build_parser().parse_args, [command, "--help"])
    assert help_alone[0] == 0 and f"usage: askbridge {command}" in help_alone[1]


@pytest.mark.parametrize("argv", BAD_COMMAND_LINES, ids=" ".join)
def test_command_line_errors_are_the_whole_parsers(
    argv: list[str], whole_parse: Callable[[list[str]], argparse.Namespace]
) -> None:
    status, out, err = _outcome(parse_args, argv)
    assert (status, out, err) == _outcome(whole_parse, argv)
    assert status == 2 and err.count("\n") == 1 and err.endswith(" --help\n"), err


def test_command_line_top_level_lists_every_command_in_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    status, out, _ = _outcome(parse_args, ["--help"])
    listed = [line.split()[0] for line in out.splitlines() if line.startswith("    ")]
    assert status == 0 and listed[: len(COMMANDS)] == list(COMMANDS)
