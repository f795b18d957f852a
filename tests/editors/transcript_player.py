"""Play the server side of a golden transcript to a real editor client.

protocol/transcripts/*.json record a client talking to `askbridge serve`. This
script stands in for the server, so an editor client's question handler can be
checked against the golden exchange without a host, a model or a clock: the
client starts it as its server command and talks to it over stdio (LSP
framing). The script sends the transcript's server messages in file order and
checks each message the client sends against the transcript's next client
message. Used by tests/editors/test_nvim_transcripts.py (the Neovim plugin)
and editors/vscode/test/transcripts.test.ts (the VS Code question handler).

    python tests/editors/transcript_player.py protocol/transcripts/blocking-ask.json \
        --report report.json [--omit-asks] [--data-dir IGNORED]

Exit status 0 once the client's `exit` notification matched with nothing wrong
before it; 1 at the first mismatch (also on stderr). The report (JSON) holds
`ok`, `problem`, the whole exchange and the extra messages that were allowed.

Matching, from the server's side of protocol/transcripts/README.md:
- Server placeholders get values here: a request id (`"id": "$askId"`) 101,
  102 …, anything else `"<name>-replayed"`; `"$*"` becomes a stand-in
  (`remainingMs` 60000, else `"replayed"`); `"$$x"` is `"$x"`.
- The client picks its own request ids and progress tokens, so those are
  bound, not compared: the transcript's `"id": 4` or `"claim-1"` stands for
  whatever the client sent there, and replies and `$/progress` use it.
- Question-handler messages (replies to server requests, `attachWait`,
  `answer`, `withdrawReply`, any other method) must equal the transcript's (same keys, same
  JSON values), except an error reply's `message`: protocol.md fixes only
  `code` and `data`, and the server replaces the text (E2) or ignores the
  reply (A9).
- Session and lifecycle messages (initialize, session/*, userQuestions/list,
  shutdown, exit) are sent by the test standing in for the user and the
  editor; they match by method and kind, and their params need only contain
  the transcript's (an editor adds its cwd and capabilities; `processId`
  differs).
- One message the transcripts do not hold is allowed: `$/cancelRequest` for
  the client's own `attachWait` after it replied to the ask that claim
  belongs to (C4: a client releases its claim when its card ends). The
  recorder did not release; the release must not come before the reply.
  `$/setTrace` notifications are skipped: vscode-languageclient sends one
  whenever any setting changes, and it says nothing about questions.
- `--omit-asks` leaves out every `userQuestions/ask` and the client's reply
  to it (pending-late-reply: the recorded client timed out without claiming,
  which our clients never do, but the late reply that follows is theirs).
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import sys
import threading
from pathlib import Path
from typing import IO, Any

from askbridge.testing.transcript import PLACEHOLDER, WILDCARD, Step, Transcript

Message = dict[str, Any]

# Sent by the test for the user and the editor, not by a question handler.
LIFECYCLE_METHODS = frozenset(
    "initialize initialized session/new session/load session/list session/prompt"
    " session/cancel userQuestions/list shutdown exit".split()
)
STAND_INS: dict[str, Any] = {"remainingMs": 60_000}
FIRST_REQUEST_ID = 101
CLIENT_TIMEOUT_S = 20.0
ANY_STRING = object()  # stands for an error reply's free-text message


class Mismatch(Exception):
    """The client's messages do not fit the transcript."""


def read_frames(fd: int, inbox: queue.Queue[Any]) -> None:
    """Reader thread: each framed message from the client, in order; None at end of input.

    Reads the raw file descriptor: a daemon thread blocked inside a buffered
    `sys.stdin` would abort the interpreter's shutdown.
    """
    buffer = b""
    try:
        while True:
            head, sep, rest = buffer.partition(b"\r\n\r\n")
            length = None
            for line in head.split(b"\r\n"):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            if sep and length is not None and len(rest) >= length:
                inbox.put(json.loads(rest[:length]))
                buffer = rest[length:]
                continue
            if sep and length is None:  # a header block without a length: skipped
                buffer = rest
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                inbox.put(None)
                return
            buffer += chunk
    except Exception as exc:  # reported as the next "message"
        inbox.put(exc)


def key(value: Any) -> str:
    return json.dumps(value)


def difference(want: Any, got: Any, path: str = "", subset: bool = False) -> str | None:
    """Where `got` differs from `want` (same keys, same JSON values), or None.
    With `subset`, objects in `got` may also hold keys that `want` lacks."""
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return f"{path or '.'}: expected an object, got {key(got)}"
        if want.keys() - got.keys() or (not subset and want.keys() != got.keys()):
            return f"{path or '.'}: keys {sorted(got)} instead of {sorted(want)}"
        for name, value in want.items():
            found = difference(value, got[name], f"{path}.{name}", subset)
            if found:
                return found
        return None
    if isinstance(want, list):
        if not isinstance(got, list) or len(want) != len(got):
            return f"{path}: expected {key(want)}, got {key(got)}"
        for i, (w, g) in enumerate(zip(want, got, strict=True)):
            found = difference(w, g, f"{path}[{i}]", subset)
            if found:
                return found
        return None
    if want is ANY_STRING:
        return None if isinstance(got, str) else f"{path}: expected a string, got {key(got)}"
    if key(want) != key(got):  # keeps true and 1 apart
        return f"{path}: expected {key(want)}, got {key(got)}"
    return None


class Player:
    def __init__(self, transcript: Transcript, omit_asks: bool, out: IO[bytes]) -> None:
        self.transcript = transcript
        self.omit_asks = omit_asks
        self.out = out
        self.inbox: queue.Queue[Any] = queue.Queue()
        self.values: dict[str, Any] = {}  # server placeholders → the values sent
        self.next_request_id = FIRST_REQUEST_ID
        self.client_ids: dict[str, Any] = {}  # transcript request id → the client's
        self.client_tokens: dict[str, Any] = {}  # transcript progress token → the client's
        self.used_ids: set[str] = set()
        self.ask_calls: dict[str, str | None] = {}  # our ask id → its wait.callId
        self.replied_calls: set[str] = set()
        self.claims: dict[str, str] = {}  # the client's attachWait id → callId
        self.released: set[str] = set()
        self.omitted: set[str] = set()  # transcript ids of omitted asks
        self.exchange: list[tuple[str, Message]] = []
        self.extras: list[Message] = []

    def play(self, stdin_fd: int) -> None:
        threading.Thread(target=read_frames, args=(stdin_fd, self.inbox), daemon=True).start()
        for step in self.transcript.steps:
            if self.omitted_step(step):
                continue
            if step.sender == "server":
                self.send(self.server_message(step.message))
            else:
                self.expect(step)

    def omitted_step(self, step: Step) -> bool:
        message = step.message
        if not self.omit_asks:
            return False
        if step.sender == "server" and message.get("method") == "userQuestions/ask":
            self.omitted.add(key(message["id"]))
            return True
        return (
            step.sender == "client"
            and "method" not in message
            and key(message["id"]) in self.omitted
        )

    # -- server → client ---------------------------------------------------------

    def fill(self, value: Any, name: str | None = None, server: bool = True) -> Any:
        """`value` with placeholders replaced: new ones get values in a server
        message (see the module docstring); a client message may only use bound ones."""
        if isinstance(value, dict):
            return {k: self.fill(v, k, server) for k, v in value.items()}
        if isinstance(value, list):
            return [self.fill(v, name, server) for v in value]
        if not isinstance(value, str):
            return value
        if value == WILDCARD and server:
            return STAND_INS.get(name or "", "replayed")
        if PLACEHOLDER.fullmatch(value):
            if value not in self.values and not server:
                raise Mismatch(f"the transcript's client uses {value} before the server sent it")
            if value not in self.values and name == "id":
                self.values[value] = self.next_request_id
                self.next_request_id += 1
            return self.values.setdefault(value, f"{value[1:]}-replayed")
        return value[1:] if value.startswith("$$") else value

    def server_message(self, pattern: Message) -> Message:
        message: Message = self.fill(pattern)
        if "method" not in pattern:  # a reply to one of the client's requests
            if key(pattern["id"]) not in self.client_ids:
                raise Mismatch(
                    f"the transcript answers request {pattern['id']} the client never sent"
                )
            message["id"] = self.client_ids[key(pattern["id"])]
        elif pattern["method"] == "$/progress":
            token = pattern["params"]["token"]
            if key(token) not in self.client_tokens:
                raise Mismatch(f"$/progress for token {token!r} the client never sent")
            message["params"]["token"] = self.client_tokens[key(token)]
        elif pattern["method"] == "userQuestions/ask":
            wait = message["params"].get("wait") or {}
            self.ask_calls[key(message["id"])] = wait.get("callId")
        return message

    def send(self, message: Message) -> None:
        self.exchange.append(("server", message))
        body = json.dumps(message).encode()
        try:
            self.out.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            self.out.flush()
        except OSError as exc:
            raise Mismatch(f"the client stopped reading ({exc})") from exc

    # -- client → server ---------------------------------------------------------

    def receive(self, step: Step) -> Message:
        try:
            message = self.inbox.get(timeout=CLIENT_TIMEOUT_S)
        except queue.Empty:
            raise Mismatch(f"no client message [{step.index}] in {CLIENT_TIMEOUT_S}s") from None
        if message is None:
            raise Mismatch(f"the client closed the connection before message [{step.index}]")
        if isinstance(message, Exception):
            raise Mismatch(f"unreadable client message: {message!r}")
        self.exchange.append(("client", message))
        return message

    def expect(self, step: Step) -> None:
        actual = self.receive(step)
        while self.is_claim_release(actual) or actual.get("method") == "$/setTrace":
            if actual.get("method") != "$/setTrace":
                self.extras.append(actual)
            actual = self.receive(step)
        expected = step.message
        if "method" in expected:
            problem = self.check_request(expected, actual)
        else:
            problem = self.check_reply(expected, actual)
        if problem:
            raise Mismatch(f"client message [{step.index}]: {problem}")

    def is_claim_release(self, message: Message) -> bool:
        if message.get("method") != "$/cancelRequest" or "id" in message:
            return False
        claim = key((message.get("params") or {}).get("id"))
        if claim not in self.claims or claim in self.released:
            return False
        if self.claims[claim] not in self.replied_calls:
            return False  # released before the reply: the reply could arrive after expiry (TW5)
        self.released.add(claim)
        return True

    def check_reply(self, expected: Message, actual: Message) -> str | None:
        want = self.fill(expected, server=False)
        if isinstance(want.get("error"), dict) and "message" in want["error"]:
            want["error"]["message"] = ANY_STRING
        problem = difference(want, actual)
        if problem:
            return f"{problem}\n  expected {json.dumps(expected)}\n  got {json.dumps(actual)}"
        call_id = self.ask_calls.get(key(want["id"]))
        if call_id:
            self.replied_calls.add(call_id)
        return None

    def bind_id(self, expected: Message, actual: Message) -> str | None:
        if ("id" in expected) != ("id" in actual):
            kind = "request" if "id" in expected else "notification"
            return f"{expected['method']} must be a {kind}: got {json.dumps(actual)}"
        if "id" not in expected:
            return None
        client_id = actual["id"]
        if not isinstance(client_id, int | str) or isinstance(client_id, bool):
            return f"request id {client_id!r} is not an integer or string"
        if key(client_id) in self.used_ids:
            return f"request id {client_id!r} was used before"
        self.used_ids.add(key(client_id))
        self.client_ids[key(expected["id"])] = client_id
        return None

    def check_request(self, expected: Message, actual: Message) -> str | None:
        method = expected["method"]
        if actual.get("method") != method:
            return f"expected {method}, got {json.dumps(actual)}"
        problem = self.bind_id(expected, actual)
        if problem:
            return problem
        want = self.fill(expected.get("params"), server=False)
        got = actual.get("params")
        if method in LIFECYCLE_METHODS:
            if isinstance(want, dict) and method == "initialize":
                want = {k: v for k, v in want.items() if k != "processId"}
            return difference(want, got, "params", subset=True) if want is not None else None
        if method == "userQuestions/attachWait" and isinstance(got, dict):
            token = got.get("partialResultToken")
            if not isinstance(token, int | str) or token == "":
                return f"partialResultToken {token!r} is not a progress token"
            self.client_tokens[key(want["partialResultToken"])] = token
            want["partialResultToken"] = token
        problem = difference(want, got, "params")
        if problem:
            return (
                f"{method} {problem}\n  expected {json.dumps(expected)}\n  got {json.dumps(actual)}"
            )
        if method == "userQuestions/attachWait":
            self.claims[key(actual["id"])] = got["callId"]
        return None

    def report(self, problem: str | None) -> dict[str, Any]:
        return {
            "ok": problem is None,
            "problem": problem,
            "transcript": self.transcript.path.name if self.transcript.path else None,
            "exchange": [{"from": who, "message": m} for who, m in self.exchange],
            "extras": self.extras,
            "values": self.values,
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("transcript", type=Path)
    parser.add_argument("--report", type=Path, required=True)
    parser.add_argument("--omit-asks", action="store_true")
    parser.add_argument("--data-dir", help="ignored: editors append it to the server command")
    args = parser.parse_args(argv)
    player = Player(Transcript.load(args.transcript), args.omit_asks, sys.stdout.buffer)
    problem = None
    try:
        player.play(sys.stdin.fileno())
    except Mismatch as exc:
        problem = str(exc)
        recent = player.exchange[-8:]
        problem += "\nlatest messages:\n" + "\n".join(f"  {w}: {json.dumps(m)}" for w, m in recent)
        print(f"transcript player ({args.transcript.name}): {problem}", file=sys.stderr)
    # Written whole, then renamed: a waiter that sees the file reads all of it.
    partial = args.report.with_name(args.report.name + ".partial")
    partial.write_text(json.dumps(player.report(problem), indent=1))
    partial.replace(args.report)
    return 0 if problem is None else 1


if __name__ == "__main__":
    sys.exit(main())
