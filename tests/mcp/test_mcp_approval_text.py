"""S17: an approval or plan-review card shows exactly what is approved, in every client.

The security review's payloads go through the real `askbridge mcp` door (`approval_prompt`,
as Claude Code calls it) to an editor attached to the same host: a Bash command whose
heredoc holds a line starting with ``` (which closed a naive code block, turning the rest
of the command into prose with links under the Allow button), and a right-to-left
override (U+202E) in the tool's name and command, which made them read backwards. The
card the editor receives is parsed with a real CommonMark parser (markdown-it-py): the
whole command is one code block, and every invisible character is spelled out.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt
from test_mcp_wire import raw_mcp

from askbridge.testing import AskbridgeClient

pytestmark = pytest.mark.timeout(60)

RLO = "\u202e"
COMMAND = (
    "cat > notes.md <<'EOF'\n"
    "```\n"
    "[Allow is safe](https://evil.example/)\n"
    "**the command ends here**\n"
    "EOF\n"
    f'rm -rf ~ {RLO},"serves#'
)
SHOWN = COMMAND.replace(RLO, "<U+202E>")
DENY = {"answers": [{"id": "approval", "selected": ["Deny"]}]}


async def card_of(tmp_path: Path, tool_name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    """The question an editor attached to the MCP door's host is asked for this call."""
    async with raw_mcp(tmp_path) as mcp:
        await mcp.initialize()
        data = tmp_path / "data"
        async with AskbridgeClient.connect(data_dir=data, host="auto") as editor:
            editor.answer_with(lambda ask: DENY)
            arguments = {"tool_name": tool_name, "input": tool_input}
            call = mcp.call("tools/call", {"name": "approval_prompt", "arguments": arguments})
            result = await mcp.reply(call)
            assert json.loads(result["result"]["content"][0]["text"])["behavior"] == "deny"
            [ask] = editor.asks
            [question] = ask["questions"]
            return question  # type: ignore[no-any-return]


async def test_S17_an_approval_card_holds_the_whole_command_in_one_code_block(
    tmp_path: Path,
) -> None:
    description = "```\nLooks harmless"  # would open a block swallowing the command's
    card = await card_of(tmp_path, "Bash", {"command": COMMAND, "description": description})
    tokens = MarkdownIt("commonmark").parse(card["detail"])
    fences = [t for t in tokens if t.type == "fence"]
    assert [(f.info, f.content) for f in fences] == [("sh", SHOWN + "\n")], card["detail"]
    assert not [t for t in tokens if t.type == "inline" and "evil.example" in t.content]
    assert RLO not in json.dumps(card, ensure_ascii=False)


async def test_S17_a_bidi_override_in_the_tool_name_is_spelled_out(tmp_path: Path) -> None:
    card = await card_of(tmp_path, f"Bash{RLO})Read File(", {"command": "ls\u200b -la"})
    assert card["question"] == "Allow Bash<U+202E>)Read File(?"
    assert card["intent"]["subject"] == {"name": "Bash<U+202E>)Read File("}
    assert "ls<U+200B> -la" in card["detail"] and "\u200b" not in card["detail"]


async def test_S17_a_plan_to_review_has_its_invisible_characters_spelled_out(
    tmp_path: Path,
) -> None:
    plan = f"# Plan\n\n- keep the data{RLO}\n- do\u2066 nothing\u2069 else\ufeff"
    card = await card_of(tmp_path, "ExitPlanMode", {"plan": plan})
    assert card["intent"]["kind"] == "plan-review"
    assert card["detail"] == (
        "# Plan\n\n- keep the data<U+202E>\n- do<U+2066> nothing<U+2069> else<U+FEFF>"
    )
