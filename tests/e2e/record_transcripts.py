"""Regenerate the golden transcripts in protocol/transcripts/ from live runs of `askbridge serve`.

    .venv/bin/python tests/e2e/record_transcripts.py            # all of them
    .venv/bin/python tests/e2e/record_transcripts.py pending    # those whose name contains it

Each scenario below drives a real server with raw frames and records every
message in the order the client sent or read it. Generated values become
placeholders (session ids, agent ids, the server's request ids) and values
that legitimately vary become `"$*"` (serverInfo.version, remainingMs,
createdAt). Review the diff before committing: the files are the contract that
test_transcripts.py (and editors' tests) hold the server to.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from e2e_scripts import ASK_TIMED_OUT_DATA, ask_step, script, text_step

from askbridge.testing.wire import Message, RawServer

OUT = Path(__file__).resolve().parents[2] / "protocol" / "transcripts"
CAPABLE = {"experimental": {"userQuestions": {"version": 1}}}
DB = {
    "id": "db",
    "header": "Setup",
    "question": "Which database?",
    "options": [
        {"label": "SQLite (Recommended)", "description": "zero setup"},
        {"label": "Postgres"},
    ],
}
PICK_SQLITE = {"answers": [{"id": "db", "selected": ["SQLite (Recommended)"]}]}


class Recorder:
    """Drives a RawServer with numbered client ids; `server.log` is the recording."""

    def __init__(self, server: RawServer) -> None:
        self.server = server

    def __getattr__(self, name: str) -> Any:
        # send/call/request/notify/respond/respond_error: RawServer's own, nothing added.
        return getattr(self.server, name)

    async def open(self, capabilities: dict[str, Any]) -> str:
        await self.call("initialize", {"processId": None, "capabilities": capabilities})
        await self.notify("initialized", {})
        return str((await self.call("session/new", {}))["result"]["sessionId"])

    async def prompt(self, sid: str, text: str) -> int:
        return await self.request(
            "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}
        )

    async def until_turn_ended(self, count: int = 1) -> None:
        for _ in range(count):
            await self.server.notification(
                "session/update", lambda p: p["update"]["sessionUpdate"] == "turn_ended"
            )

    async def close(self) -> None:
        await self.call("shutdown")
        await self.notify("exit")
        await self.server.read_to_end()


Scenario = Callable[[Recorder], Awaitable[None]]


async def blocking_ask(r: Recorder) -> None:
    sid = await r.open(CAPABLE)
    prompt = await r.prompt(sid, "Set up the project")
    ask = await r.server.server_request("userQuestions/ask")
    await r.respond(ask["id"], PICK_SQLITE)
    await r.server.response(prompt)
    await r.close()


async def multi_select_custom(r: Recorder) -> None:
    sid = await r.open(CAPABLE)
    prompt = await r.prompt(sid, "Plan the stack")
    ask = await r.server.server_request("userQuestions/ask")
    answer = {
        "answers": [
            {"id": "langs", "selected": ["Python", "Rust"], "custom": "plus a little Zig"},
            {"id": "name", "selected": [], "custom": "orders-api"},
        ]
    }
    await r.respond(ask["id"], answer)
    await r.server.response(prompt)
    await r.close()


async def timed_claim(r: Recorder) -> None:
    sid = await r.open(CAPABLE)
    prompt = await r.prompt(sid, "Set up the project")
    ask = await r.server.server_request("userQuestions/ask")
    params = {"sessionId": sid, "callId": "call-1", "partialResultToken": "claim-1"}
    claim = await r.request("userQuestions/attachWait", params)
    await r.server.notification("$/progress")
    await r.respond(ask["id"], PICK_SQLITE)
    await r.server.response(claim)
    await r.server.response(prompt)
    await r.until_turn_ended()
    await r.close()


async def pending_then_late_reply(r: Recorder) -> None:
    sid = await r.open(CAPABLE)
    prompt = await r.prompt(sid, "Set up the project")
    ask = await r.server.server_request("userQuestions/ask")
    await r.respond_error(ask["id"], -32000, "the card's countdown ran out", ASK_TIMED_OUT_DATA)
    await r.server.response(prompt)
    await r.until_turn_ended()
    params = {"sessionId": sid, "callId": "call-1", "answer": PICK_SQLITE}
    await r.call("userQuestions/answer", params)
    await r.until_turn_ended()
    await r.call("userQuestions/list", {"sessionId": sid})
    await r.close()


async def session_cancel_during_ask(r: Recorder) -> None:
    sid = await r.open(CAPABLE)
    prompt = await r.prompt(sid, "Set up the project")
    ask = await r.server.server_request("userQuestions/ask")
    await r.notify("session/cancel", {"sessionId": sid})
    await r.server.notification("$/cancelRequest")
    await r.server.response(prompt)
    await r.until_turn_ended()
    await r.respond_error(ask["id"], -32800, "Request cancelled")
    await r.close()


async def generic_client_fallback(r: Recorder) -> None:
    sid = await r.open({"window": {"showMessage": {}}})
    prompt = await r.prompt(sid, "Set up the project")
    first = await r.server.server_request("window/showMessageRequest")
    await r.respond(first["id"], {"title": "Postgres"})
    second = await r.server.server_request("window/showMessageRequest")
    await r.respond(second["id"], {"title": "Linux"})
    await r.server.response(prompt)
    await r.until_turn_ended()
    await r.close()


async def errors(r: Recorder) -> None:
    await r.call("initialize", {"processId": None, "capabilities": CAPABLE})
    await r.notify("initialized", {})
    await r.call("session/load", {"sessionId": "s-unknown"})
    await r.call("textDocument/hover", {})
    await r.call("session/new", {"askUserQuestion": {"timeout": 0}})
    sid = str((await r.call("session/new", {}))["result"]["sessionId"])
    await r.call("userQuestions/answer", {"sessionId": sid, "callId": "call-1"})
    await r.call(
        "userQuestions/answer", {"sessionId": sid, "callId": "call-1", "answer": PICK_SQLITE}
    )
    await r.call("session/list", {})
    await r.close()


OS = {"id": "os", "question": "Which OS?", "options": [{"label": "Linux"}, {"label": "BSD"}]}
LANGS = {
    "id": "langs",
    "question": "Which languages?",
    "multi_select": True,
    "options": [{"label": "Python"}, {"label": "Rust"}, {"label": "Go"}],
}
NAME = {"id": "name", "header": "Naming", "question": "What is the service called?"}

SCENARIOS: dict[str, tuple[str, list[str], list[Any], Scenario]] = {
    "blocking-ask": (
        "A blocking (legacy) ask answered by a capable client",
        ["A7", "T3", "V8"],
        [
            "--model",
            script(
                ask_step(questions=[DB], text="One question first."), text_step("Using SQLite.")
            ),
        ],
        blocking_ask,
    ),
    "multi-select-custom": (
        "A multi-select question answered with several labels plus custom text, and a free-text question",
        ["V2", "V4", "V8", "T2"],
        ["--model", script(ask_step(questions=[LANGS, NAME]), text_step("Noted."))],
        multi_select_custom,
    ),
    "timed-claim": (
        "A timed ask claimed by the client (attachWait + one $/progress), then answered",
        ["TW4", "C3", "TW10", "P2", "P3"],
        [
            "--model",
            script(ask_step(questions=[DB]), text_step("Using SQLite.")),
            "--ask-mode",
            "timed",
            "--ask-timeout",
            "60",
        ],
        timed_claim,
    ),
    "pending-late-reply": (
        "A timed ask ends pending (the client's countdown ran out), then a late reply wakes the agent",
        ["TW7", "T5", "L1", "L4", "L6", "P3", "P4"],
        [
            "--model",
            script(
                ask_step(questions=[DB]),
                text_step("Carrying on meanwhile."),
                text_step("Got it: SQLite."),
            ),
            "--ask-mode",
            "timed",
            "--ask-timeout",
            "60",
        ],
        pending_then_late_reply,
    ),
    "session-cancel-during-ask": (
        "session/cancel while a question is open: $/cancelRequest, ASK_ABORTED, stopReason cancelled",
        ["A9"],
        ["--model", script(ask_step(questions=[DB]), text_step("unused"))],
        session_cancel_during_ask,
    ),
    "generic-client-fallback": (
        "A client without the capability is asked with window/showMessageRequest, one question at a time",
        ["W1", "V8"],
        ["--model", script(ask_step(questions=[DB, OS]), text_step("Postgres on Linux."))],
        generic_client_fallback,
    ),
    "errors": (
        "Error replies: UNKNOWN_SESSION, unknown method, invalid settings, invalid params, L1 false",
        ["L1"],
        [],
        errors,
    ),
}


def placeholders(log: list[tuple[str, Message]]) -> dict[str, str]:
    """Generated values → placeholder names, in order of first sight."""
    names: dict[str, str] = {}
    counters: dict[str, int] = {}

    def name(value: str, base: str) -> None:
        if value not in names:
            counters[base] = counters.get(base, 0) + 1
            names[value] = f"${base}" if counters[base] == 1 else f"${base}{counters[base]}"

    request_names = {
        "userQuestions/ask": "askId",
        "window/showMessageRequest": "showId",
        "window/workDoneProgress/create": "createId",
    }
    for sender, message in log:
        if sender != "server":
            continue
        result = message.get("result")
        if isinstance(result, dict) and isinstance(result.get("sessionId"), str):
            name(result["sessionId"], "sessionId")
        params = message.get("params")
        if isinstance(params, dict) and isinstance(params.get("agentId"), str):
            name(params["agentId"], "agentId")
        if "method" in message and "id" in message:
            name(message["id"], request_names.get(message["method"], "requestId"))
    return names


def generalize(value: Any, names: dict[str, str], wildcards: bool, key: str = "") -> Any:
    """Generated values → placeholders; in server messages, varying values → "$*"."""
    if wildcards and key in ("remainingMs", "createdAt"):
        return "$*"
    if isinstance(value, dict):
        return {k: generalize(v, names, wildcards, k) for k, v in value.items()}
    if isinstance(value, list):
        return [generalize(v, names, wildcards) for v in value]
    if isinstance(value, str) and value in names:
        return names[value]
    return value


def loose_invalid_params(error: dict[str, Any]) -> dict[str, Any]:
    """-32602: the code and the failing fields are the contract; the wording is for humans."""
    errors = [{"field": e["field"], "message": "$*"} for e in error["data"]["errors"]]
    return {**error, "message": "$*", "data": {"errors": errors}}


async def record(name: str) -> Path:
    title, rules, args, scenario = SCENARIOS[name]
    argv = [a if isinstance(a, str) else json.dumps(a) for a in args]
    with tempfile.TemporaryDirectory() as tmp:
        async with RawServer.start(Path(tmp) / "data", *argv) as server:
            recorder = Recorder(server)
            await scenario(recorder)
            status = await server.wait()
    names = placeholders(server.log)
    messages = []
    for sender, message in server.log:
        result = message.get("result")
        if sender == "server" and isinstance(result, dict) and "serverInfo" in result:
            message = {
                **message,
                "result": {**result, "serverInfo": {"name": "askbridge", "version": "$*"}},
            }
        error = message.get("error")
        if sender == "server" and isinstance(error, dict) and error.get("code") == -32602:
            message = {**message, "error": loose_invalid_params(error)}
        messages.append({"from": sender, "message": generalize(message, names, sender == "server")})
    doc = {"title": title, "rules": rules, "args": args, "exitStatus": status, "messages": messages}
    path = OUT / f"{name}.json"
    path.write_text(dump(doc) + "\n", encoding="utf-8")
    return path


def dump(doc: dict[str, Any]) -> str:
    """Readable JSON: one message per line inside `messages`, the header indented."""
    head = {k: v for k, v in doc.items() if k != "messages"}
    lines = [json.dumps(m, ensure_ascii=False) for m in doc["messages"]]
    text = json.dumps(head, indent=2, ensure_ascii=False)[:-2]
    return text + ',\n  "messages": [\n    ' + ",\n    ".join(lines) + "\n  ]\n}"


async def main(patterns: list[str]) -> None:
    for name in SCENARIOS:
        if not patterns or any(p in name for p in patterns):
            print(await record(name))


if __name__ == "__main__":
    anyio.run(main, sys.argv[1:])
