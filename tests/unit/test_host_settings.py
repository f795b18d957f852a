"""HostSettings: the command line's one reading (daemon.front.door_defaults) as a Host's
session defaults (T1, protocol.md "Command line"), the same for an inline front door, a
host process and the ACP test driver."""

from __future__ import annotations

import pytest

from askbridge.cli_parser import build_parser
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
