"""Where each key of a TOML document is written, so that a refusal names its line (R5).

`tomllib` gives values without positions, and a policy is refused for what it means
(an unknown field, a role nobody has) as often as for its syntax. `key_lines` walks
a document `tomllib` already parsed and maps each key's path to the line it is on:
`("rule", 2, "match", "kind")` for the `kind` of the third `[[rule]]`'s match, and
`("rule", 2, "escalate", 1)` for the second element of an array. A path it does not
know (a key inside an inline table in some odd spelling) falls back to its longest
known prefix (`line_of`), so a refusal always names a line at or near the fault.
"""

from __future__ import annotations

import tomllib
from collections.abc import Sequence

Path = tuple[str | int, ...]

_BARE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


class _Scanner:
    """A reader of TOML's structure only: keys, headers, where values start and end."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.line = 1
        self.lines: dict[Path, int] = {}
        self.arrays: dict[Path, int] = {}  # array-of-tables path -> its last index

    def peek(self, n: int = 1) -> str:
        return self.text[self.pos : self.pos + n]

    def advance(self, n: int = 1) -> None:
        self.line += self.text.count("\n", self.pos, self.pos + n)
        self.pos += n

    def skip_blank(self, newlines: bool) -> None:
        while self.pos < len(self.text):
            c = self.text[self.pos]
            if c == "#":
                end = self.text.find("\n", self.pos)
                self.advance((len(self.text) if end < 0 else end) - self.pos)
            elif c in " \t\r" or (newlines and c == "\n"):
                self.advance()
            else:
                return

    def key(self) -> list[str]:
        """A dotted key: bare, "basic" and 'literal' parts."""
        parts: list[str] = []
        while True:
            self.skip_blank(newlines=False)
            c = self.peek()
            if c in ('"', "'"):
                start = self.pos
                self.string()
                # tomllib reads the quoted key's escapes exactly as it did in the document.
                parts.append(tomllib.loads(f"k = {self.text[start : self.pos]}")["k"])
            else:
                start = self.pos
                while self.pos < len(self.text) and self.text[self.pos] in _BARE:
                    self.pos += 1
                parts.append(self.text[start : self.pos])
            self.skip_blank(newlines=False)
            if self.peek() != ".":
                return parts
            self.advance()

    def string(self) -> None:
        quote = self.peek()
        if self.peek(3) == quote * 3:
            self.advance(3)
            end = self.pos
            while True:
                end = self.text.index(quote * 3, end)
                if quote == '"' and _escaped(self.text, end):
                    end += 1
                    continue
                break
            while self.text[end + 3 : end + 4] == quote:  # up to two quotes end the content
                end += 1
            self.advance(end + 3 - self.pos)
            return
        self.advance()
        while self.text[self.pos] != quote or (quote == '"' and _escaped(self.text, self.pos)):
            self.advance()
        self.advance()

    def value(self, path: Path) -> None:
        self.lines.setdefault(path, self.line)
        c = self.peek()
        if c in ('"', "'"):
            self.string()
        elif c == "[":
            self.advance()
            index = 0
            while True:
                self.skip_blank(newlines=True)
                if self.peek() == "]":
                    self.advance()
                    return
                self.value((*path, index))
                index += 1
                self.skip_blank(newlines=True)
                if self.peek() == ",":
                    self.advance()
        elif c == "{":
            self.advance()
            while True:
                self.skip_blank(newlines=False)
                if self.peek() == "}":
                    self.advance()
                    return
                self.key_value(path)
                self.skip_blank(newlines=False)
                if self.peek() == ",":
                    self.advance()
        else:
            while self.pos < len(self.text) and self.text[self.pos] not in ",]}#\n":
                self.advance()

    def key_value(self, table: Path) -> None:
        line = self.line
        keys = self.key()
        for end in range(1, len(keys) + 1):  # `match.kind = …` also writes `match`
            self.lines.setdefault((*table, *keys[:end]), line)
        path = (*table, *keys)
        self.skip_blank(newlines=False)
        self.advance()  # "="
        self.skip_blank(newlines=False)
        self.value(path)

    def header(self) -> Path:
        line = self.line
        many = self.peek(2) == "[["
        self.advance(2 if many else 1)
        parts = self.key()
        resolved: list[str | int] = []
        for i, part in enumerate(parts):
            resolved.append(part)
            # A table inside an array of tables belongs to its last element.
            if (i < len(parts) - 1 or not many) and tuple(resolved) in self.arrays:
                resolved.append(self.arrays[tuple(resolved)])
        path: Path = tuple(resolved)
        if many:
            index = self.arrays.get(path, -1) + 1
            self.arrays[path] = index
            path = (*path, index)
        self.advance(2 if many else 1)
        self.lines[path] = line
        return path

    def document(self) -> dict[Path, int]:
        table: Path = ()
        while True:
            self.skip_blank(newlines=True)
            if self.pos >= len(self.text):
                return self.lines
            if self.peek() == "[":
                table = self.header()
            else:
                self.key_value(table)


def _escaped(text: str, at: int) -> bool:
    """Whether the character at `at` follows an odd run of backslashes."""
    run = 0
    while at - run - 1 >= 0 and text[at - run - 1] == "\\":
        run += 1
    return run % 2 == 1


def key_lines(text: str) -> dict[Path, int]:
    """Each key's line in `text`, a document `tomllib` parsed (so it is well formed). A
    spelling this reader gets wrong costs precision, never a crash: what it found so far."""
    scanner = _Scanner(text)
    try:
        return scanner.document()
    except (IndexError, ValueError, tomllib.TOMLDecodeError):
        return scanner.lines


def line_of(lines: dict[Path, int], path: Sequence[str | int]) -> int:
    """The line of `path`, or of its longest prefix written in the document (1 if none)."""
    for end in range(len(path), 0, -1):
        line = lines.get(tuple(path[:end]))
        if line is not None:
            return line
    return 1
