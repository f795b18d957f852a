"""Our JSON encoding and our log lines use other libraries' public names only.

json's `c_make_encoder` and `encode_basestring`, logging's `_srcfile`, asyncio's
`_get_running_loop` and a loop's `_selector` are not promised to anyone: an
interpreter upgrade may change or drop them. This reads the modules that encode
JSON and make log lines (with `ast`) for such a name: imported from a library,
read off an imported module, or named in a string (`getattr(loop, "_selector")`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "server" / "askbridge"

CHECKED = [
    "protocol",
    "jsonrpc",
    "host/log",
    "host/store",
    "host/agent",
    "core",
    "lsp/relay.py",
    "log_lines.py",
    "logsetup.py",
]

# Names still used, each with the module that uses it: the test fails when one is gone, so
# this list can only shrink.
KNOWN = {
    "host/store/datadir_guard.py": [
        "import _socket",
        "import _struct",
        "from _sha2 import sha256",
        "from _sha256 import sha256",
    ],
    "host/store/sqlite_open.py": ["import _sqlite3"],
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


def _files() -> list[Path]:
    files: list[Path] = []
    for entry in CHECKED:
        path = PKG / entry
        files.extend(sorted(path.rglob("*.py")) if path.is_dir() else [path])
    return files


@pytest.mark.parametrize("path", _files(), ids=lambda p: str(p.relative_to(PKG)))
def test_no_private_name_of_another_library(path: Path) -> None:
    assert list(private_names(path)) == KNOWN.get(str(path.relative_to(PKG)), [])
