"""Golden transcripts with more than one client: an MCP agent and an editor on one host.

The format is protocol/transcripts/README.md's, with two changes: `doors`
names each client (`{"editor": {"door": "lsp"}, "agent": {"door": "mcp",
"options": {...}}}`, instead of `args`), and each message says which one it
belongs to (`"door": "editor"`). Placeholders bind across doors (the
session id the editor sees is the one the agent's calls run in), and a bound
value inside a longer string (a call id inside a tool result's JSON text)
matches the placeholder written inside that string.

    .venv/bin/python tests/mcp/mcp_transcript.py     # re-record protocol/transcripts/multi-client/

Replaying runs in one process (bench.py) until `--host auto` lets two real
processes share a data directory; each door's messages are matched in
causal order, streams as in the single-door replayer.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
from bench import CAPABLE, Bench, Journal, Message, Peer, bench, db_question

from askbridge.testing.transcript import Bindings, TranscriptMismatch, stream_of

OUT = Path(__file__).resolve().parents[2] / "protocol" / "transcripts" / "multi-client"
NAME = "mcp-ask-answered-in-editor.json"
TITLE = (
    "An MCP agent's questions in an editor: one answered there, one pending whose late reply "
    "from the editor reaches the agent through get_answers"
)
RULES = ["X1", "X2", "X3", "M2", "TW6", "X4", "L4", "L6", "P3", "P4"]
AGENT_OPTIONS = {"ask_timeout": 60, "cwd": "/work/project"}
NAME_QUESTION = {"id": "name", "question": "What should the project be called?"}


async def scenario(b: Bench) -> None:
    editor = await b.editor(CAPABLE)
    agent = await b.agent(name="claude-code", ask_timeout=60)
    first = agent.call_tool("ask_user_question", {"questions": [db_question()], "timeout": 60})
    ask = await editor.request("userQuestions/ask")
    editor.respond(ask["id"], {"answers": [{"id": "db", "selected": ["SQLite"]}]})
    await agent.result(first)
    await editor.notification(
        "session/update", lambda p: p["update"]["sessionUpdate"] == "tool_call_update"
    )
    second = agent.call_tool("ask_user_question", {"questions": [NAME_QUESTION], "timeout": 1})
    ask2 = await editor.request("userQuestions/ask")
    await agent.result(second)
    await editor.notification("$/cancelRequest")
    await editor.notification(
        "userQuestions/didChange", lambda p: p["changes"][0]["state"] == "continued"
    )
    editor.send(
        {"jsonrpc": "2.0", "id": ask2["id"], "error": {"code": -32800, "message": "cancelled"}}
    )
    late = {
        "sessionId": ask2["params"]["sessionId"],
        "callId": ask2["params"]["wait"]["callId"],
        "answer": {"answers": [{"id": "name", "selected": [], "custom": "askbridge"}]},
    }
    assert await editor.result(editor.call("userQuestions/answer", late)) is True
    collected = agent.call_tool("get_answers", {})
    await agent.result(collected)
    await editor.notification("session/update", lambda p: p["update"].get("title") == "get_answers")
    await editor.notification("session/update", lambda p: _is_collected(p["update"]))
    await editor.result(editor.call("shutdown"))
    editor.notify("exit")
    agent.close()


def _is_collected(update: dict[str, Any]) -> bool:
    """The tool_call_update of the get_answers call (its text lists the answers)."""
    if update["sessionUpdate"] != "tool_call_update":
        return False
    return str(update["content"][0]["content"]["text"]).startswith('{"answers":[{')


# -- recording ----------------------------------------------------------------------------


def placeholders(journal: Journal) -> dict[str, str]:
    names: dict[str, str] = {}
    counters: dict[str, int] = {}

    def name(value: Any, base: str) -> None:
        if isinstance(value, str) and value not in names:
            counters[base] = counters.get(base, 0) + 1
            names[value] = f"${base}" if counters[base] == 1 else f"${base}{counters[base]}"

    for _, sender, message in journal:
        if sender != "server":
            continue
        params = message.get("params")
        if isinstance(params, dict):
            name(params.get("sessionId"), "sessionId")
            name(params.get("agentId"), "agentId")
            wait = params.get("wait")
            if isinstance(wait, dict):
                name(wait.get("callId"), "callId")
            update = params.get("update")
            if isinstance(update, dict):
                name(update.get("toolCallId"), "callId")
        if "method" in message and "id" in message:
            name(
                message["id"], "askId" if message["method"] == "userQuestions/ask" else "requestId"
            )
    return names


def generalize(value: Any, names: dict[str, str], server: bool, key: str = "") -> Any:
    if server and key == "createdAt":
        return "$*"
    if server and key == "serverInfo" and isinstance(value, dict):
        return {**value, "version": "$*"}
    if isinstance(value, dict):
        return {k: generalize(v, names, server, k) for k, v in value.items()}
    if isinstance(value, list):
        return [generalize(v, names, server) for v in value]
    if isinstance(value, str):
        if value in names:
            return names[value]
        for actual, placeholder in names.items():
            value = value.replace(actual, placeholder)
    return value


async def record() -> Path:
    with tempfile.TemporaryDirectory() as tmp:
        async with bench(Path(tmp), real_time=True) as b:
            await scenario(b)
            await anyio.sleep(0.2)  # let the last notifications land in the journal
        journal = b.journal
    names = placeholders(journal)
    doc = {
        "title": TITLE,
        "rules": RULES,
        "doors": {"editor": {"door": "lsp"}, "agent": {"door": "mcp", "options": AGENT_OPTIONS}},
        "messages": [
            {
                "door": door,
                "from": sender,
                "message": generalize(message, names, sender == "server"),
            }
            for door, sender, message in journal
        ],
    }
    path = OUT / NAME
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


# -- replaying ----------------------------------------------------------------------------


def _inside(actual: Any, bindings: Bindings) -> Any:
    """`actual` with bound values inside longer strings written as their placeholders."""
    if isinstance(actual, dict):
        return {k: _inside(v, bindings) for k, v in actual.items()}
    if isinstance(actual, list):
        return [_inside(v, bindings) for v in actual]
    if isinstance(actual, str):
        for placeholder, value in bindings.values.items():
            if isinstance(value, str) and len(value) >= 8 and value != actual:
                actual = actual.replace(value, placeholder)
    return actual


class DoorMatcher:
    def __init__(self, steps: list[tuple[int, Message]], bindings: Bindings) -> None:
        self.bindings = bindings
        self.streams: dict[tuple[str, ...], list[tuple[int, Message]]] = {}
        for index, message in steps:
            self.streams.setdefault(stream_of(message), []).append((index, message))
        self.matched: set[int] = set()

    def feed(self, actual: Message) -> int:
        heads = sorted((q[0] for q in self.streams.values() if q), key=lambda s: s[0])
        candidate = _inside(actual, self.bindings)
        for index, pattern in heads:
            if self.bindings.match(pattern, candidate):
                self.streams[stream_of(pattern)].pop(0)
                self.matched.add(index)
                return index
        expected = [json.dumps(p)[:300] for _, p in heads]
        raise TranscriptMismatch(
            f"unexpected {json.dumps(actual)[:600]}\nexpected one of {expected}"
        )


async def replay(doc: dict[str, Any], b: Bench) -> None:
    bindings = Bindings()
    steps = doc["messages"]
    peers: dict[str, Peer] = {
        "editor": await b.editor(initialize=False),
        "agent": await b.raw_agent(ask_timeout=doc["doors"]["agent"]["options"]["ask_timeout"]),
    }
    matchers = {
        door: DoorMatcher(
            [
                (i, s["message"])
                for i, s in enumerate(steps)
                if s["door"] == door and s["from"] == "server"
            ],
            bindings,
        )
        for door in peers
    }
    for index, step in enumerate(steps):
        door, peer, matcher = step["door"], peers[step["door"]], matchers[step["door"]]
        if step["from"] == "client":
            peer.send(bindings.substitute(step["message"]))
            continue
        while index not in matcher.matched:
            matcher.feed(await peer.receive())
    for door, peer in peers.items():  # nothing left over
        peer.close()
        while True:
            try:
                extra = await peer.receive(timeout=2)
            except (EOFError, TimeoutError):
                break
            matchers[door].feed(extra)


if __name__ == "__main__":
    print(anyio.run(record))
    sys.exit(0)
