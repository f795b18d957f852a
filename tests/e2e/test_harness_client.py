"""`askbridge.testing.AskbridgeClient` never leaves a harness test hanging or guessing.

- A server that exits before answering `initialize` raises ServerStartError naming
  its exit status and the last lines of its stderr.
- `prompt()` gives up after its timeout with a TimeoutError naming the session.
- A failure inside `async with` (a test's assertion) comes out as itself, not
  wrapped in an ExceptionGroup.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from e2e_scripts import ask_step, script

from askbridge.testing import AskbridgeClient, ServerStartError

pytestmark = pytest.mark.timeout(60)


async def test_a_server_that_cannot_start_says_its_status_and_stderr(tmp_path: Path) -> None:
    log = tmp_path / "missing" / "server.log"
    with pytest.raises(ServerStartError) as info:
        async with AskbridgeClient.connect(
            data_dir=tmp_path / "data", args=["--log-file", str(log)], echo_stderr=False
        ):
            pytest.fail("connect() yielded a client for a server that exited")
    assert info.value.status == 2
    assert info.value.stderr_tail == [
        f"askbridge serve: error: cannot open --log-file {log}: No such file or directory; "
        "see askbridge serve --help"
    ]
    assert str(info.value).startswith("askbridge serve exited with status 2 before answering")
    assert "cannot open --log-file" in str(info.value)


@pytest.mark.inline_only  # with --host auto a second front door attaches (H2)
async def test_a_busy_data_dir_is_a_start_error_with_the_servers_reason(tmp_path: Path) -> None:
    async with AskbridgeClient.connect(data_dir=tmp_path / "data"):
        with pytest.raises(ServerStartError) as info:
            async with AskbridgeClient.connect(data_dir=tmp_path / "data", echo_stderr=False):
                pass
    assert info.value.status == 1
    assert "is in use by process" in info.value.stderr_tail[-1]


async def test_prompt_gives_up_after_its_timeout(tmp_path: Path) -> None:
    """Nobody answers the blocking question: prompt(timeout=0.5) raises instead of hanging."""
    async with AskbridgeClient.connect(
        data_dir=tmp_path / "data", model=script(ask_step())
    ) as client:
        sid = await client.new_session()
        with pytest.raises(
            TimeoutError, match=f"the turn of session {sid} did not end within 0.5 s"
        ):
            await client.prompt(sid, "go", timeout=0.5)
        client.cancel(sid)


async def test_an_assertion_inside_the_client_is_raised_as_itself(askbridge_client: Any) -> None:
    with pytest.raises(AssertionError, match="the test's own failure"):
        async with askbridge_client():
            raise AssertionError("the test's own failure")
