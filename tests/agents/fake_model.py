"""A scripted model endpoint on 127.0.0.1 for the real agents.

One endpoint (tests/model_endpoint.py) speaks the three wire dialects the
agents use: Anthropic Messages with SSE (Claude Code), OpenAI Responses with SSE (Codex)
and Gemini `streamGenerateContent` with SSE (Gemini CLI). Every request is recorded, so a
test asserts what the model saw.

The script is a list of steps; which step answers is the number of model turns already in
the conversation the agent sends (its assistant messages, function calls or model
contents), not a counter of requests: agents retry and make side requests (titles,
quota probes), and those must not advance the script. A request that carries no tools
is such a side request and gets a short text. Each step is `{"tool": name, "input": {...}}`
(a tool call) or `{"text": "..."}` (a final answer), optionally with `"after": Event`, which
holds that step's response until the test sets it; past the end the model says "done".
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from model_endpoint import ModelHandler, serving

Step = dict[str, Any]
STEP_GATE_S = 60


@dataclass
class Request:
    method: str
    path: str
    body: Any


@dataclass
class FakeModel:
    steps: list[Step]
    requests: list[Request] = field(default_factory=list)
    url: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, request: Request) -> None:
        with self.lock:
            self.requests.append(request)

    def turns(self) -> list[Any]:
        """The bodies of the requests that carried tools (the agent's main loop)."""
        with self.lock:
            return [r.body for r in self.requests if isinstance(r.body, dict) and _tools(r.body)]

    def seen(self) -> str:
        """Everything the main loop sent, as one string, for 'reached the model' checks."""
        return "\n".join(json.dumps(b) for b in self.turns())

    def step(self, done_turns: int) -> Step:
        step = self.steps[done_turns] if done_turns < len(self.steps) else {"text": "done"}
        gate = step.get("after")
        if isinstance(gate, threading.Event):
            gate.wait(STEP_GATE_S)  # the test does something first (a late answer, say)
        return step


def _tools(body: dict[str, Any]) -> bool:
    return bool(body.get("tools"))


# -- Anthropic Messages (Claude Code) -------------------------------------------------------


def _anthropic(model: FakeModel, body: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    done = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
    step = model.step(done) if _tools(body) else {"text": "ok"}
    message = {
        "id": f"msg_{len(model.requests)}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "fake"),
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    yield "message_start", {"type": "message_start", "message": message}
    if "tool" in step:
        block: dict[str, Any] = {
            "type": "tool_use",
            "id": f"toolu_{done}",
            "name": step["tool"],
            "input": {},
        }
        delta = {"type": "input_json_delta", "partial_json": json.dumps(step["input"])}
        stop = "tool_use"
    else:
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": step["text"]}
        stop = "end_turn"
    yield "content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}
    yield "content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}
    yield "content_block_stop", {"type": "content_block_stop", "index": 0}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": 1},
        },
    )
    yield "message_stop", {"type": "message_stop"}


# -- OpenAI Responses (Codex) ---------------------------------------------------------------


def _responses(model: FakeModel, body: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    items = body.get("input", [])
    done = sum(1 for i in items if isinstance(i, dict) and i.get("type") == "function_call")
    step = model.step(done) if _tools(body) else {"text": "ok"}
    rid = f"resp_{len(model.requests)}"
    yield "response.created", {"type": "response.created", "response": {"id": rid}}
    if "tool" in step:
        item: dict[str, Any] = {
            "type": "function_call",
            "id": f"fc_{done}",
            "call_id": f"call_{done}",
            "name": step["tool"],
            "arguments": json.dumps(step["input"]),
        }
        if "namespace" in step:  # Codex groups an MCP server's tools in one namespace
            item["namespace"] = step["namespace"]
    else:
        item = {
            "type": "message",
            "id": f"msg_{done}",
            "role": "assistant",
            "content": [{"type": "output_text", "text": step["text"], "annotations": []}],
        }
    yield "response.output_item.done", {"type": "response.output_item.done", "item": item}
    usage = {
        "input_tokens": 1,
        "input_tokens_details": None,
        "output_tokens": 1,
        "output_tokens_details": None,
        "total_tokens": 2,
    }
    completed = {"id": rid, "usage": usage}
    yield "response.completed", {"type": "response.completed", "response": completed}


# -- Gemini streamGenerateContent (Gemini CLI) ----------------------------------------------


def _gemini(model: FakeModel, body: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    contents = body.get("contents", [])
    done = sum(
        1
        for c in contents
        if c.get("role") == "model" and any("functionCall" in p for p in c.get("parts", []))
    )
    step = model.step(done) if _tools(body) else {"text": "ok"}
    if "tool" in step:
        part: dict[str, Any] = {"functionCall": {"name": step["tool"], "args": step["input"]}}
    else:
        part = {"text": step["text"]}
    chunk = {
        "candidates": [
            {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
    }
    yield "", chunk


class _Handler(ModelHandler):
    model: FakeModel  # its recorded requests are the log

    def _body(self) -> Any:
        raw = self.read_body()
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            return raw.decode(errors="replace")

    def do_GET(self) -> None:
        self.model.record(Request("GET", self.path, None))
        self._json(200, {"data": [], "models": []})

    def do_HEAD(self) -> None:
        self.model.record(Request("HEAD", self.path, None))
        self.send_response(200)
        self.end_headers()

    def do_POST(self) -> None:
        body = self._body()
        self.model.record(Request("POST", self.path, body))
        path = self.path.split("?")[0]
        if not isinstance(body, dict):
            self._json(200, {})
        elif path.endswith("/messages/count_tokens"):
            self._json(200, {"input_tokens": 1})
        elif path.endswith("/messages"):
            self._sse(_anthropic(self.model, body))
        elif path.endswith("/responses"):
            self._sse(_responses(self.model, body))
        elif ":streamGenerateContent" in path:
            self._sse(_gemini(self.model, body))
        elif ":generateContent" in path:  # Gemini CLI's side calls (routing, titles)
            self._json(200, next(_gemini(self.model, body))[1])
        elif ":countTokens" in path:
            self._json(200, {"totalTokens": 1})
        else:
            self._json(200, {})  # an unknown probe: logged above, answered empty

    def _json(self, status: int, payload: Any) -> None:
        self.reply(json.dumps(payload).encode(), status=status)

    def _sse(self, events: Iterator[tuple[str, dict[str, Any]]]) -> None:
        chunks = []
        for name, data in events:
            head = f"event: {name}\n" if name else ""
            chunks.append(f"{head}data: {json.dumps(data)}\n\n")
        self.reply("".join(chunks).encode(), "text/event-stream")


@contextmanager
def fake_model(steps: list[Step]) -> Iterator[FakeModel]:
    """Serve `steps` on 127.0.0.1 (a free port) until the block ends."""
    model = FakeModel(steps)
    with serving(type("Handler", (_Handler,), {"model": model})) as url:
        model.url = url
        yield model
