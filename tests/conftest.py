"""Suite-wide rules: every door test runs in both host modes, and no host outlives its test.

- Tests under tests/e2e and tests/acp run twice, `[inline]` and `[auto]`
  (H2, H3): `ASKBRIDGE_HOST` is set for the test, so every `askbridge serve`/
  `acp` it starts — through the harness or by hand — is its own host, or
  attaches to its data directory's host started on demand. Mark a test
  `@pytest.mark.inline_only` (with the reason in its docstring) where the
  mode cannot apply, e.g. a door driven in-process on a manual clock, or
  `own_host_modes` where a module-scoped server parametrizes the modes itself.
- The order the suite runs in, and which tests stay on one xdist worker:
  tests/scheduling.py.
- Every async test runs on `SettlingLoop`, the default loop that lets
  `settle()` tell when all its tasks are blocked (tests/settling.py).
- After every module, any host still listening under pytest's temporary
  directory (an editor's `askbridge serve` starts one in auto mode; the
  harness stops its own) is stopped and waited for.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest
from hypothesis import settings

from askbridge.process.attach import DEFAULT_HOST_MODE_ENV
from askbridge.testing.hosts import stop_host
from scheduling import configure as configure_scheduling
from scheduling import pytest_collection_modifyitems  # noqa: F401  (a hook: the suite's order)
from settling import SettlingLoop

DOOR_SUITES = ("e2e", "acp", "mcp")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "inline_only: a door test the auto host mode cannot run")
    config.addinivalue_line("markers", "own_host_modes: the module parametrizes host modes itself")
    configure_scheduling(config)
    # A property test checks what is computed, never how long it took: hypothesis's per-example
    # deadline is a wall-clock assertion, and on 2 shared cores a loaded moment fails it.
    settings.register_profile("askbridge", deadline=None)
    settings.load_profile("askbridge")


def pytest_asyncio_loop_factories(
    config: pytest.Config, item: pytest.Item
) -> Mapping[str, Callable[[], asyncio.AbstractEventLoop]]:
    """Every async test runs on the default loop that `settle()` can see into (settling.py)."""
    return {"asyncio": SettlingLoop}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    in_door_suite = Path(str(metafunc.definition.path)).parent.name in DOOR_SUITES
    if not in_door_suite and "host_mode" not in metafunc.fixturenames:
        return
    if metafunc.definition.get_closest_marker("own_host_modes") is not None:
        return
    if "host_mode" not in metafunc.fixturenames:
        metafunc.fixturenames.append("host_mode")
    inline_only = metafunc.definition.get_closest_marker("inline_only") is not None
    modes = ["inline"] if inline_only else ["inline", "auto"]
    metafunc.parametrize("host_mode", modes)


@pytest.fixture(autouse=True)
def _host_mode_env(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The test's host mode for every process it starts (ASKBRIDGE_HOST)."""
    callspec = getattr(request.node, "callspec", None)
    mode = callspec.params.get("host_mode") if callspec is not None else None
    if mode is not None:
        monkeypatch.setenv(DEFAULT_HOST_MODE_ENV, mode)


@pytest.fixture(autouse=True, scope="module")
def _no_host_left_behind(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    yield
    for sock in tmp_path_factory.getbasetemp().glob("**/host.sock"):
        stop_host(sock.parent)
