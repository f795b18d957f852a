"""Golden transcripts: load one, and replay it against a real `askbridge serve`.

The format is documented in protocol/transcripts/README.md. In short: a JSON
object with `args` (command-line flags after `askbridge serve`; the replayer
adds `--data-dir`), optional `exitStatus`, and `messages`, an ordered list of
`{"from": "client"|"server", "message": {...}}`. Strings like `"$sessionId"`
are placeholders: bound to the actual value on first sight in a server
message, then required to be equal, and substituted into client messages.
`"$*"` matches any value without binding; `"$$x"` is the literal `"$x"`.

    bindings = await replay(Transcript.load(path), tmp_path / "data")

Matching (`TranscriptMatcher`) is strict but not timing-sensitive:
- a client message is sent only when every server message listed before it
  has arrived (the file is in causal order);
- server messages belong to streams — a response by its id, a server request
  by its method, a notification by its method, `sessionId` and progress
  `token` — and each stream must arrive in file order, while different
  streams may interleave;
- a message that is not the next one of any stream fails at once, and so does
  anything left over when the server ends its output.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .wire import Message, RawServer

PLACEHOLDER = re.compile(r"\$[A-Za-z_][A-Za-z0-9_]*")
WILDCARD = "$*"


class TranscriptMismatch(AssertionError):
    """The server's messages do not fit the transcript."""


@dataclass(frozen=True)
class Step:
    index: int
    sender: str  # "client" | "server"
    message: Message


@dataclass
class Transcript:
    title: str
    args: list[str]
    steps: list[Step]
    exit_status: int | None = None
    path: Path | None = None

    @classmethod
    def load(cls, path: str | Path) -> Transcript:
        path = Path(path)
        raw = json.loads(path.read_text(encoding="utf-8"))
        return cls.from_json(raw, path)

    @classmethod
    def from_json(cls, raw: dict[str, Any], path: Path | None = None) -> Transcript:
        args = [a if isinstance(a, str) else json.dumps(a) for a in raw.get("args", [])]
        steps = []
        for i, entry in enumerate(raw["messages"]):
            sender = entry["from"]
            if sender not in ("client", "server") or not isinstance(entry.get("message"), dict):
                raise ValueError(f"messages[{i}] needs from client|server and a message object")
            steps.append(Step(i, sender, entry["message"]))
        return cls(str(raw.get("title", "")), args, steps, raw.get("exitStatus"), path)


def stream_of(pattern: Message) -> tuple[str, ...]:
    """The stream a server message belongs to; each stream arrives in file order."""
    if "method" not in pattern:
        return ("response", json.dumps(pattern.get("id")))
    if "id" in pattern:
        return ("request", pattern["method"])
    params = pattern.get("params")
    params = params if isinstance(params, dict) else {}
    key = ("notification", pattern["method"], json.dumps(params.get("sessionId")))
    return key + ((json.dumps(params.get("token")),) if pattern["method"] == "$/progress" else ())


@dataclass
class Bindings:
    values: dict[str, Any] = field(default_factory=dict)

    def match(self, pattern: Any, actual: Any) -> bool:
        """Does `actual` fit `pattern`? Binds new placeholders only when the whole match fits."""
        trial = dict(self.values)
        if not _match(pattern, actual, trial):
            return False
        self.values = trial
        return True

    def substitute(self, pattern: Any) -> Any:
        """`pattern` with every placeholder replaced by its bound value (for client messages)."""
        if isinstance(pattern, dict):
            return {k: self.substitute(v) for k, v in pattern.items()}
        if isinstance(pattern, list):
            return [self.substitute(v) for v in pattern]
        if isinstance(pattern, str):
            if pattern == WILDCARD:
                raise ValueError("a client message cannot hold the wildcard $*")
            if PLACEHOLDER.fullmatch(pattern):
                if pattern not in self.values:
                    raise TranscriptMismatch(f"{pattern} is used before the server sent it")
                return self.values[pattern]
            if pattern.startswith("$$"):
                return pattern[1:]
        return pattern


def _match(pattern: Any, actual: Any, bound: dict[str, Any]) -> bool:
    if isinstance(pattern, str):
        if pattern == WILDCARD:
            return True
        if PLACEHOLDER.fullmatch(pattern):
            if pattern in bound:
                return _same(bound[pattern], actual)
            bound[pattern] = actual
            return True
        literal = pattern[1:] if pattern.startswith("$$") else pattern
        return isinstance(actual, str) and actual == literal
    if isinstance(pattern, dict):
        return (
            isinstance(actual, dict)
            and pattern.keys() == actual.keys()
            and all(_match(v, actual[k], bound) for k, v in pattern.items())
        )
    if isinstance(pattern, list):
        return (
            isinstance(actual, list)
            and len(pattern) == len(actual)
            and all(_match(p, a, bound) for p, a in zip(pattern, actual, strict=True))
        )
    return _same(pattern, actual)


def _same(a: Any, b: Any) -> bool:
    """JSON equality that keeps `true` and `1` apart."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


class TranscriptMatcher:
    """The server side of a transcript, fed with the messages the server actually sent."""

    def __init__(self, transcript: Transcript) -> None:
        self.transcript = transcript
        self.bindings = Bindings()
        self._streams: dict[tuple[str, ...], list[Step]] = {}
        for step in transcript.steps:
            if step.sender == "server":
                self._streams.setdefault(stream_of(step.message), []).append(step)
        self._matched: set[int] = set()
        self.log: list[tuple[str, Message]] = []  # what was sent and received, for reports

    def unmatched_before(self, index: int) -> list[Step]:
        """Server steps listed before `index` that have not arrived yet."""
        return [
            s
            for s in self.transcript.steps[:index]
            if s.sender == "server" and s.index not in self._matched
        ]

    def heads(self) -> list[Step]:
        """The next expected message of every stream, in file order."""
        heads = [q[0] for q in self._streams.values() if q]
        return sorted(heads, key=lambda s: s.index)

    def feed(self, actual: Message) -> Step:
        """Match one server message against the stream heads; raise if it fits none."""
        self.log.append(("server", actual))
        for step in self.heads():
            if self.bindings.match(step.message, actual):
                self._streams[stream_of(step.message)].pop(0)
                self._matched.add(step.index)
                return step
        raise TranscriptMismatch(self.report(f"unexpected server message:\n  {_show(actual)}"))

    def client_message(self, step: Step) -> Message:
        message: Message = self.bindings.substitute(step.message)
        self.log.append(("client", message))
        return message

    def report(self, problem: str) -> str:
        where = f" ({self.transcript.path.name})" if self.transcript.path else ""
        lines = [f"transcript{where}: {problem}", "expected next, per stream:"]
        lines += [f"  [{s.index}] {_show(s.message)}" for s in self.heads()]
        lines.append(f"bindings: {json.dumps(self.bindings.values)}")
        lines.append("exchange so far (latest last):")
        lines += [f"  {who}: {_show(m)}" for who, m in self.log[-15:]]
        return "\n".join(lines)


def _show(message: Any) -> str:
    text = json.dumps(message)
    return text if len(text) <= 600 else text[:600] + "…"


async def replay(transcript: Transcript, data_dir: str | Path, timeout: float = 10) -> Bindings:
    """Replay `transcript` against a fresh `askbridge serve`; returns the bindings.

    Raises TranscriptMismatch when a server message fits no stream, when an
    expected message does not arrive within `timeout` seconds, when anything is
    left over at the end, or when the exit status differs from `exitStatus`.
    If the transcript does not end the process, end of input is sent last.
    """
    matcher = TranscriptMatcher(transcript)
    async with RawServer.start(data_dir, *transcript.args) as server:

        async def arrive_before(index: int) -> None:
            while matcher.unmatched_before(index):
                try:
                    message = await server.receive(timeout)
                except (TimeoutError, EOFError) as exc:
                    waiting = matcher.unmatched_before(index)[0]
                    problem = f"no server message [{waiting.index}] ({type(exc).__name__})"
                    raise TranscriptMismatch(matcher.report(problem)) from exc
                matcher.feed(message)

        for step in transcript.steps:
            if step.sender == "client":
                await arrive_before(step.index)
                await server.send(matcher.client_message(step))
        await arrive_before(len(transcript.steps))
        if server.process.returncode is None and not _ends_process(transcript):
            server.close_input()
        for extra in await server.read_to_end(timeout):
            matcher.feed(extra)  # anything left over fits no stream: raises
        status = await server.wait(timeout)
        if transcript.exit_status is not None and status != transcript.exit_status:
            problem = f"exit status {status}, expected {transcript.exit_status}"
            raise TranscriptMismatch(matcher.report(problem) + "\n" + server.stderr_text())
    return matcher.bindings


def _ends_process(transcript: Transcript) -> bool:
    return any(s.sender == "client" and s.message.get("method") == "exit" for s in transcript.steps)
