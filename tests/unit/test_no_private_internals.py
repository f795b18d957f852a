"""askbridge uses other libraries' public names only, with the one measured exception.

json's `c_make_encoder` and `encode_basestring`, logging's `_srcfile`, asyncio's
`_get_running_loop`, a loop's `_selector`, argparse's `_actions`, anyio's backends and
the standard library's private C modules (`_socket`, `_json`, `_sqlite3`) are not
promised to anyone: an interpreter or library upgrade may change or drop them. This
reads every module of the package (with `ast`) for such a name: imported from a
library, read off an imported module, or named in a string (`getattr(loop,
"_selector")`). The exceptions are KNOWN, each in one module that says what it buys.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "server" / "askbridge"

# The exceptions, each in one module whose docstring says what it buys, measured. The test
# fails when a name here is gone, so this list can only shrink.
KNOWN = {
    "process/ctrl_c.py": ["import anyio._backends._asyncio"],
    "process/hostsock.py": [
        "import _json",
        "import _socket",
        "from _sha2 import sha256",
        "from _sha256 import sha256",
        "_json.encode_basestring_ascii",
        "_json.encode_basestring",
    ],
}

# Private by their documentation, though not spelled with an underscore.
UNDOCUMENTED = {"c_make_encoder", "encode_basestring", "encode_basestring_ascii"}


def _private(name: str) -> bool:
    return name in UNDOCUMENTED or (name.startswith("_") and not name.startswith("__"))


def private_names(path: Path) -> Iterator[str]:
    tree = ast.parse(path.read_text(), str(path))
    modules: set[str] = set()  # names bound to an imported library module
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _private(alias.name.split(".")[-1]):
                    yield f"import {alias.name}"
                modules.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            if not (node.module or "").startswith("askbridge"):
                for alias in node.names:
                    if _private(alias.name) or _private((node.module or "").split(".")[-1]):
                        yield f"from {node.module} import {alias.name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            base = node.value
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name) and base.id in modules:
                yield f"{ast.unparse(node)}"
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value in UNDOCUMENTED or node.value in {"_selector", "_srcfile"}:
                yield repr(node.value)


@pytest.mark.parametrize("path", sorted(PKG.rglob("*.py")), ids=lambda p: str(p.relative_to(PKG)))
def test_no_private_name_of_another_library(path: Path) -> None:
    assert list(private_names(path)) == KNOWN.get(str(path.relative_to(PKG)), [])
