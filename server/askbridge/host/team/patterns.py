"""The two kinds of pattern a rule matches with: globs for the session, a regex for the text.

A session fact is a name or a path (an agent, a title, a directory, a repository, an
origin), and a pattern for it is a glob matched against the whole value, as in
Python's `fnmatch` (case-sensitive): `*` is any run of characters, `/` included,
so `/srv/ci/*` is everything under /srv/ci; `?` is one character; `[abc]` one of
them. Whole-value matching keeps a rule from catching a path that only contains
the one it names (`/home/x/srv/ci`), which an unanchored regex would.

A question's text is prose, where a rule looks for a word or a phrase anywhere, with
alternatives and word boundaries: a Python regex, searched (`re.search`), so
`\\bdeploy\\b` matches "Deploy now?" only with `(?i)`. The text is the question
itself (at most 2,000 characters, S1), never its detail.

Evaluation is the hot part of a policy (every question, every rule until one
matches), so the usual globs skip the regex engine: a glob without wildcards is a
set lookup, `PREFIX*` a `startswith`; the rest of a field's globs are one
alternation.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence
from dataclasses import dataclass

_WILDCARDS = frozenset("*?[")


def _plain(text: str) -> bool:
    return not _WILDCARDS.intersection(text)


@dataclass(frozen=True, slots=True)
class GlobSet:
    """Any of a field's globs matches the whole value; a missing value matches none."""

    globs: tuple[str, ...]
    literals: frozenset[str]
    prefixes: tuple[str, ...]
    regex: re.Pattern[str] | None

    @classmethod
    def of(cls, globs: Sequence[str]) -> GlobSet:
        literals: set[str] = set()
        prefixes: list[str] = []
        rest: list[str] = []
        for glob in globs:
            if _plain(glob):
                literals.add(glob)
            elif glob.endswith("*") and _plain(glob[:-1]):
                prefixes.append(glob[:-1])
            else:
                rest.append(glob)
        regex = re.compile("|".join(fnmatch.translate(g) for g in rest)) if rest else None
        return cls(tuple(globs), frozenset(literals), tuple(prefixes), regex)

    def matches(self, value: str | None) -> bool:
        if value is None:
            return False
        if value in self.literals or value.startswith(self.prefixes):
            return True
        return self.regex is not None and self.regex.match(value) is not None


def compile_text(pattern: str) -> re.Pattern[str]:
    """A rule's text regex; re.error says what is wrong with it."""
    return re.compile(pattern)
