"""The demo's built-in data: the scripted model (`script.json`) and the guide (`guide.json`).

`script.json` is a plain ModelSpec (protocol.md "ModelSpec"), so it also works
outside the demo: `askbridge serve --model script:server/askbridge/demo/script.json`.
`guide.json` is what the demo tells the person around it: the prompt it sends,
an intro and outro, and per tool call id a stage with a title, a hint, whether
the person should let the question time out (`letPass`), and the lines
`--auto` "types" (`auto` for the card, `lateAuto` for the late answer).
Both files are read with pydantic, once, so a typo fails at start-up.
"""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any

from pydantic import Field

from askbridge.protocol.base import WireModel
from askbridge.protocol.model_spec import ScriptModelSpec


class Stage(WireModel):
    """What the demo says and does around one `ask_user_question` call."""

    title: str
    hint: str
    let_pass: bool = False
    auto: list[str] = Field(default_factory=list)
    late_auto: list[str] = Field(default_factory=list)


class Guide(WireModel):
    prompt: str
    intro: str
    stages: dict[str, Stage]
    late_title: str
    late_hint: str
    outro: str

    def stage(self, call_id: str) -> Stage:
        """The stage of a call id; an unknown call gets a plain stage so the demo never breaks."""
        return self.stages.get(call_id) or Stage(title=call_id, hint="")


def _read(name: str) -> Any:
    return json.loads(files("askbridge.demo").joinpath(name).read_text(encoding="utf-8"))


def load_script() -> dict[str, Any]:
    """The scripted model as a ModelSpec dict, checked against the ModelSpec schema."""
    data: dict[str, Any] = _read("script.json")
    ScriptModelSpec.model_validate(data)
    return data


def load_guide() -> Guide:
    return Guide.model_validate(_read("guide.json"))
