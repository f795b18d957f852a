"""askbridge as a newcomer installs it: a wheel built from this checkout, in a clean venv.

- The wheel holds everything the package reads at run time (the demo's script and
  guide, `py.typed`) and the LICENSE; its runtime dependencies leave out pygls and
  lsprotocol, which only the tests use.
- Installed alone into a fresh venv, `askbridge --version` and `askbridge demo --auto`
  (a real `askbridge serve` underneath) work.
- The README's harness example, copied verbatim (its pytest configuration block and its
  test file) into a clean project, passes once the same venv has the `[testing]` extra
  added (what `pip install askbridge[testing]` gives: nothing else is in it).

The wheel is built the way `pipx install .` / `pip install git+…` build one: pip, from the
source tree (copied first, so the checkout gets no build/ or egg-info). Dependencies come
from the package index pip is configured with; nothing is taken from this test's venv.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
INSTALL_TIMEOUT_S = 600
pytestmark = pytest.mark.timeout(INSTALL_TIMEOUT_S)


def clean_env() -> dict[str, str]:
    """The environment without this test run's venv, so nothing leaks into the clean one."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.pop("PYTEST_ADDOPTS", None)
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def run(*args: str | Path, cwd: Path | None = None, timeout: float = 120) -> str:
    done = subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env=clean_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, f"{args} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, src / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc")
    shutil.copytree(ROOT / "server", src / "server", ignore=ignore)
    out = tmp_path_factory.mktemp("dist")
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", out, src, timeout=300)
    (built,) = out.glob("askbridge-*.whl")
    return built


def venv_with(path: Path, *requirements: str) -> Path:
    """A fresh venv (not based on this one) with `requirements` installed; its bin dir."""
    base = getattr(sys, "_base_executable", sys.executable)
    run(base, "-m", "venv", path)
    run(path / "bin" / "python", "-m", "pip", "install", "-q", *requirements, timeout=500)
    return path / "bin"


def test_the_wheel_holds_what_the_package_reads_and_its_license(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    for needed in ("askbridge/py.typed", "askbridge/demo/script.json", "askbridge/demo/guide.json"):
        assert needed in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert not [n for n in names if n.startswith("tests/")]
    (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
    text = zipfile.ZipFile(wheel).read(metadata).decode()
    assert "License-Expression: MIT" in text
    runtime = [
        line
        for line in text.splitlines()
        if line.startswith("Requires-Dist:") and "extra" not in line
    ]
    assert runtime and not [line for line in runtime if re.search(r"pygls|lsprotocol", line)]
    assert "Provides-Extra: testing" in text


def readme_block(first_line: str) -> str:
    """The README's fenced code block whose first line starts with `first_line`, verbatim."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for block in re.findall(r"^```[a-z]*\n(.*?)^```", readme, flags=re.S | re.M):
        if block.splitlines()[0].startswith(first_line):
            return str(block)
    raise AssertionError(f"README.md has no code block starting with {first_line!r}")


def test_installed_alone_it_runs_then_with_testing_the_readme_harness_passes(
    wheel: Path, tmp_path: Path
) -> None:
    """One venv, as a newcomer's: the wheel alone first (no test tooling comes with it),
    then its `[testing]` extra added, which is what the README tells a harness author to
    install. One venv rather than two: the runtime dependencies are installed once (the
    second venv cost ~40 s of `make test`'s budget, measured in this suite's timeline)."""
    bin_dir = venv_with(tmp_path / "venv", str(wheel))
    assert run(bin_dir / "askbridge", "--version").strip() == "askbridge 0.1.0"
    listed = run(bin_dir / "python", "-m", "pip", "list")
    assert "pygls" not in listed and "lsprotocol" not in listed and "pytest" not in listed
    out = run(bin_dir / "askbridge", "demo", "--auto", cwd=tmp_path, timeout=60)
    assert "turn t-2 started · cause: inbox" in out
    assert "turn t-2 ended: end_turn" in out

    run(bin_dir / "python", "-m", "pip", "install", "-q", f"{wheel}[testing]", timeout=500)
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(readme_block("# pyproject.toml of your project"))
    (project / "test_my_agent.py").write_text(readme_block("# test_my_agent.py"))
    out = run(bin_dir / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=project)
    assert re.search(r"\b2 passed\b", out), out
    assert "warning" not in out.lower(), out  # its configuration as given: no deprecation
