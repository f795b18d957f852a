"""What happened in one demo run, told back in the outro: not fixed text.

`DemoSession` notes each thing as it happens — an answer, a claim, a question
that went pending, a late answer that woke the agent — and `outro()` renders
the list as markdown under the guide's closing lines, so the summary is true
whatever the person did (answered with their own text, skipped, let the timed
question run out too…).
"""

from __future__ import annotations

from typing import Any

from askbridge.process.log_lines import escaped
from askbridge.protocol.vocabulary import QuestionItem


def describe_answer(question: QuestionItem, item: dict[str, Any]) -> str:
    """One answer item in words: the picked labels and/or the person's own text."""
    parts = [f"“{label}”" for label in item.get("selected", [])]
    if item.get("custom"):
        parts.append(f"your own text “{item['custom']}”")
    if not parts:
        return "nothing (you skipped it)"
    return " and ".join([", ".join(parts[:-1]), parts[-1]] if len(parts) > 1 else parts)


class Story:
    def __init__(self) -> None:
        self.facts: list[str] = []

    def answered(self, title: str, questions: list[QuestionItem], answers: list[Any]) -> None:
        said = "; ".join(describe_answer(q, a) for q, a in zip(questions, answers, strict=False))
        self.facts.append(f"**{title}**: you answered {said}.")

    def claimed(self, call_id: str, remaining_ms: int) -> None:
        self.facts.append(
            f"Your first keystroke on `{call_id}` claimed its wait with "
            f"{remaining_ms / 1000:.1f} s left: the server's clock stayed stopped until you "
            "answered."
        )

    def pending(self, call_id: str) -> None:
        self.facts.append(
            f"`{call_id}` reached its deadline unanswered: the model got *pending* (not a no) "
            "and carried on."
        )

    def answered_late(self, call_id: str, turn_id: str) -> None:
        self.facts.append(
            f"Your late answer to `{call_id}` went to the agent's inbox and woke it into turn "
            f"{turn_id} (cause `inbox`)."
        )

    def outro(self, closing: str, data_note: str) -> str:
        lines = "\n".join(f"- {fact}" for fact in self.facts) or "- Nothing was answered."
        # The facts quote the agent's call ids and the person's text: shown, never obeyed (S17).
        return escaped(f"What happened:\n\n{lines}\n\n{closing} {data_note}", newlines=True)
