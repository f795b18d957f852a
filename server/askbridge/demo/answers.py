"""From what the person types to an answer item (docs/rules.md V4, V8): no I/O here.

A question with options is shown as a numbered menu whose last entry is
"Other" (write your own answer). The person types numbers:
- single-select: exactly one number; Other means the free text becomes
  `custom` and `selected` stays empty (V4: custom replaces the choice);
- multi-select: any numbers, separated by commas or spaces, or nothing at all
  (a skipped question); Other adds `custom` beside the selected labels.
A question without options takes free text only (empty = skipped).
`parse_choice` raises ValueError with a sentence the prompt shows as is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from askbridge.protocol.vocabulary import QuestionItem

OTHER_LABEL = "Other"
OTHER_DESCRIPTION = "write your own answer"


@dataclass(frozen=True)
class Choice:
    """The option labels picked, and whether Other (free text) was picked too."""

    labels: list[str]
    other: bool


def option_count(question: QuestionItem) -> int:
    return len(question.options or [])


def takes_numbers(question: QuestionItem) -> bool:
    """Questions with options are answered by number; the rest by free text."""
    return option_count(question) > 0


def choice_hint(question: QuestionItem) -> str:
    """The prompt's one-line instruction for a numbered question."""
    last = option_count(question) + 1
    if question.multi_select:
        return f"numbers 1-{last}, e.g. 1,3 (Enter for none)"
    return f"a number 1-{last}"


def parse_choice(text: str, question: QuestionItem) -> Choice:
    options = question.options or []
    last = len(options) + 1
    words = [w for w in re.split(r"[\s,]+", text.strip()) if w]
    if not words and question.multi_select:
        return Choice([], False)
    if not words:
        raise ValueError(f"Type a number from 1 to {last}.")
    if any(not w.isdigit() or not 1 <= int(w) <= last for w in words):
        raise ValueError(f"Use numbers from 1 to {last} only.")
    picked = sorted({int(w) for w in words})
    if not question.multi_select and len(picked) > 1:
        raise ValueError("Pick one option only.")
    labels = [options[n - 1].label for n in picked if n < last]
    return Choice(labels, last in picked)


def answer_item(question: QuestionItem, choice: Choice, custom: str | None) -> dict[str, Any]:
    """The V4 answer item; `custom` only when there is text, and it empties a single choice."""
    item: dict[str, Any] = {"id": question.id, "selected": list(choice.labels)}
    if custom:
        item["custom"] = custom
        if not question.multi_select:
            item["selected"] = []
    return item


def check_custom(text: str) -> None:
    """Other was picked, so its text must not be empty."""
    if not text.strip():
        raise ValueError("Other needs a few words of your own.")
