"""HostSettings: the command line's one reading (daemon.front.door_defaults) as a Host's
session defaults (T1, protocol.md "Command line"), the same for an inline front door, a
host process and the ACP test driver."""

from __future__ import annotations

import pytest

from askbridge.cli.parser import build_parser, parse_args
from askbridge.daemon.front import door_defaults
from askbridge.host.options import HostSettings
from askbridge.protocol.defaults import (
    ASK_MODE_DEFAULT,
    ASK_TIMEOUT_DEFAULT_SECONDS,
    MAX_TURN_REQUESTS_DEFAULT,
)


def settings_of(*argv: str) -> HostSettings:
    return HostSettings.over_defaults(door_defaults(build_parser().parse_args(list(argv))))


@pytest.mark.parametrize("command", ["serve", "acp", "mcp", "host"])
def test_T1_without_flags_a_host_has_the_defaults(command: str) -> None:
    assert settings_of(command) == HostSettings(
        model=None,
        ask_user_question={"mode": ASK_MODE_DEFAULT, "timeout": ASK_TIMEOUT_DEFAULT_SECONDS},
        max_turn_requests=MAX_TURN_REQUESTS_DEFAULT,
    )


def test_T1_a_flag_sets_its_field_and_keeps_the_others_default() -> None:
    timed = settings_of("serve", "--ask-mode", "timed")
    assert timed.ask_user_question == {"mode": "timed", "timeout": ASK_TIMEOUT_DEFAULT_SECONDS}
    short = settings_of("acp", "--ask-timeout", "30", "--max-turn-requests", "7")
    assert short.ask_user_question == {"mode": ASK_MODE_DEFAULT, "timeout": 30}
    assert short.max_turn_requests == 7
    model = settings_of("serve", "--model", '{"kind": "script", "steps": []}')
    assert model.model == {"kind": "script", "steps": []}


def test_host_settings_do_not_share_their_default_dict() -> None:
    """Each HostSettings has its own ask_user_question: a Host that changes its copy does not
    change the next one's defaults."""
    first, second = HostSettings(), HostSettings.over_defaults({})
    assert first.ask_user_question == second.ask_user_question
    assert first.ask_user_question is not second.ask_user_question


def test_S16_delegation_limits_lower_freely_and_travel_as_a_session_default() -> None:
    lowered = settings_of("serve", "--delegation-limits", "depth=1,requests=50")
    assert lowered.delegation == {"depth": 1, "requests": 50}
    assert settings_of("serve").delegation is None  # the defaults (host/agent/delegation.py)
    raised = parse_args(["acp", "--delegation-limits", "sessions=200", "--raise-delegation-limits"])
    assert door_defaults(raised)["delegation"] == {"sessions": 200}


@pytest.mark.parametrize(
    ("value", "said"),
    [
        (
            "depth=4,children=2",
            "--delegation-limits depth=4 is above the default "
            "(depth=3,children=8,sessions=64,requests=500); add --raise-delegation-limits",
        ),
        ("requests=0", "requests must be an integer of at least 1"),
        ("width=2", "unknown limit 'width'"),
        ("depth=-1", "depth must be an integer of at least 0"),
    ],
)
def test_S16_delegation_limits_above_the_defaults_need_the_flag(
    capsys: pytest.CaptureFixture[str], value: str, said: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        parse_args(["serve", "--delegation-limits", value])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert said in err and err.count("\n") == 1, err
