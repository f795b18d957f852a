"""The README's commands and examples hold; the harness example itself
runs in tests/install/test_wheel.py, from a clean install.

- Every `--model` value the README shows is a ModelSpec `askbridge serve` accepts, and
  every `script:PATH` names a file of this repository.
- Every relative link and every `#anchor` points at something that exists.
- No install instruction names a package index release that does not exist
  (`pip install askbridge`), and no placeholder owner (`OWNER/askbridge`) is left.
- The harness section: its pytest configuration leaves no deprecation warning, it
  names the client's methods, and it awaits exactly the ones that are coroutines.
"""

from __future__ import annotations

import inspect
import json
import re
import tomllib
from pathlib import Path

import pytest

from askbridge.protocol.model_spec import parse_model_spec_option
from askbridge.testing import AskbridgeClient
from askbridge.testing.handles import Claim

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def model_values() -> list[str]:
    shell = re.findall(r"--model '([^']+)'", README)
    jsonc = [json.loads(f'"{v}"') for v in re.findall(r'"--model", "((?:[^"\\]|\\.)*)"', README)]
    # The VS Code setting `askbridge.model` holds a ModelSpec object (possibly over two lines).
    settings = [" ".join(v.split()) for v in re.findall(r'"askbridge\.model": (\{[^}]*\})', README)]
    return shell + jsonc + settings


def test_the_readme_shows_model_values() -> None:
    assert len(model_values()) >= 3


@pytest.mark.parametrize("value", model_values())
def test_every_model_value_in_the_readme_is_accepted(value: str) -> None:
    if value.startswith("script:"):  # a path relative to the clone
        value = f"script:{ROOT / value.removeprefix('script:')}"
    parse_model_spec_option(value)


def test_every_script_path_in_the_readme_exists() -> None:
    paths = re.findall(r"script:([\w./-]+\.json)", README)
    assert paths
    for path in paths:
        parse_model_spec_option(f"script:{ROOT / path}")


def slug(heading: str) -> str:
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def test_links_and_anchors_point_at_something() -> None:
    anchors = {slug(h) for h in re.findall(r"^#+ (.+)$", README, flags=re.M)}
    for target in re.findall(r"\]\(([^)]+)\)", README):
        if target.startswith("http"):
            continue
        path, _, anchor = target.partition("#")
        if path:
            assert (ROOT / path).exists(), target
        elif anchor:
            assert anchor in anchors, target


def test_no_install_line_names_what_does_not_exist() -> None:
    assert not re.search(r"pip install askbridge\b(?!\[)", README)
    assert "OWNER/" not in README


def harness_section() -> str:
    return README.split("\n## Harness tests\n", 1)[1].split("\n## ", 1)[0]


def test_the_harness_pytest_configuration_sets_the_fixture_loop_scope() -> None:
    """Unset, pytest-asyncio warns on the first run of the README's own example."""
    block = re.search(r"```toml\n(# pyproject\.toml of your project.*?)```", README, flags=re.S)
    assert block is not None
    options = tomllib.loads(block[1])["tool"]["pytest"]["ini_options"]
    assert options["asyncio_mode"] == "auto"
    assert options["asyncio_default_fixture_loop_scope"] == "function"


def test_the_harness_section_names_view_and_withdraw_reply() -> None:
    section = harness_section()
    for name in ("claim", "withdraw_reply", "view", "answer_late", "wait_for", "updates"):
        assert f"client.{name}(" in section, name


@pytest.mark.parametrize(
    ("owner", "name", "awaited"),
    [
        (owner, m[2], bool(m[1]))
        for owner in ("client", "claim")
        for m in re.finditer(rf"(await\s+)?\b{owner}\.(\w+)\(", harness_section())
    ],
)
def test_every_harness_call_in_the_readme_is_awaited_exactly_when_it_is_a_coroutine(
    owner: str, name: str, awaited: bool
) -> None:
    """`claim()` is awaited, `Claim.release()` is a plain call: the README says which."""
    cls = {"client": AskbridgeClient, "claim": Claim}[owner]
    method = getattr(cls, name)
    assert inspect.iscoroutinefunction(method) == awaited, f"{owner}.{name}"
