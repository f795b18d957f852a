"""Play a golden transcript's server side to the web door, standing in for its child.

`askbridge web` runs `askbridge serve` as its child and is an LSP client of it
(server/askbridge/web/bridge.py). With `ASKBRIDGE_WEB_SERVE` set to this script's
command line, the door talks to this script instead: it plays the transcript's
server messages and checks the door's messages against the transcript's client
messages, with tests/editors/transcript_player.py's rules (the editors' player;
its docstring says what is compared exactly), adapted to a client that is not an
editor:

- Session and lifecycle messages of the recorded client (`session/new`,
  `session/prompt`, `session/cancel`, `userQuestions/list`, `shutdown`, `exit`)
  were the user's, at an editor; the door never sends them. They and the
  recorded server's replies to them are left out. `initialize` and `initialized`
  stay: the door sends them.
- The door's own following (B1) is answered here whenever it comes: every
  `session/list` gets `{"sessions": []}` (the transcript's session reaches the door
  by its ask and views, as an external session's do, M1).
- Claims: the door takes a claim when a timed ask arrives and drops it once the
  one `$/progress` frame told the deadline (its probe, protocol/README.md "Web
  door"), and claims again while a page holds the card (B4). So a claim's
  release (`$/cancelRequest` of an `attachWait`) is allowed at any time, and an
  `attachWait` for an asked call beyond the transcript's one is allowed too: it
  gets its one frame (C3) with the stand-in `remainingMs` 60000.
- `session/cancel` was the user's, at an editor, while the card was open: where
  it stood the player waits (answering the door's extras) until the file `--cue`
  names exists, so that the test can let the page show the card before the
  server withdraws it. Without `--cue` it does not wait.
- After the last step the player keeps answering those until end of input (the
  door closes its child's stdin when it stops); anything else then is a mismatch.

    python tests/web/web_transcript_player.py TRANSCRIPT --report R [--log L] [--cue F] [--omit-asks]

The report is written when the steps are done (`done: true`) and again at end of
input. `--log` appends every message the door sends, one JSON line each, as it
arrives (tests/web/test_web_idle.py counts the door's requests over time).
"""

from __future__ import annotations

import argparse
import json
import queue
import sys
import time
from pathlib import Path
from typing import IO, Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "editors"))
from transcript_player import Message, Mismatch, Player, key

from askbridge.testing.transcript import Step, Transcript

CUED = "session/cancel"
CUE_POLL_S = 0.05
NOT_THE_DOORS = frozenset(
    "session/new session/load session/prompt session/cancel userQuestions/list shutdown exit".split()
)


def door_steps(transcript: Transcript) -> list[Step]:
    """The transcript without the recorded client's session and lifecycle exchanges
    (a `session/cancel` stays, as the cue to wait for)."""
    dropped: set[str] = set()
    steps = []
    for step in transcript.steps:
        message = step.message
        if step.sender == "client" and message.get("method") in NOT_THE_DOORS:
            if "id" in message:
                dropped.add(key(message["id"]))
            if message.get("method") == CUED:
                steps.append(step)
            continue
        if step.sender == "server" and "method" not in message and key(message["id"]) in dropped:
            continue
        steps.append(step)
    return steps


class DoorPlayer(Player):
    def __init__(
        self,
        transcript: Transcript,
        omit_asks: bool,
        out: IO[bytes],
        log: Path | None = None,
        cue: Path | None = None,
    ) -> None:
        transcript.steps = door_steps(transcript)
        super().__init__(transcript, omit_asks, out)
        self.log = log.open("a") if log else None
        self.cue = cue
        self.expecting: Step | None = None

    def receive(self, step: Step) -> Message:
        message = super().receive(step)
        self.note(message)
        return message

    def note(self, message: Message) -> None:
        if self.log is not None:
            self.log.write(json.dumps({"t": time.monotonic(), "message": message}) + "\n")
            self.log.flush()

    def expect(self, step: Step) -> None:
        self.expecting = step
        if step.message.get("method") == CUED:
            self.wait_for_cue()
            return
        super().expect(step)

    def wait_for_cue(self) -> None:
        while self.cue is not None and not self.cue.exists():
            try:
                message = self.inbox.get(timeout=CUE_POLL_S)
            except queue.Empty:
                continue
            self.extra(message, "while waiting for the cue")

    def extra(self, message: Any, when: str) -> None:
        """A message outside the steps: one of the door's extras, or a mismatch."""
        if message is None:
            raise Mismatch(f"the door closed the connection {when}")
        if isinstance(message, Exception):
            raise Mismatch(f"unreadable client message: {message!r}")
        self.exchange.append(("client", message))
        self.note(message)
        if not self.is_claim_release(message):
            raise Mismatch(f"{when}: {json.dumps(message)}")
        self.extras.append(message)

    def is_claim_release(self, message: Message) -> bool:
        """The base player's one allowed extra, widened to the door's extras (above):
        True (and answered here) for a listing, a claim beyond the transcript's, or
        any claim's release."""
        method = message.get("method")
        if method == "session/list" and "id" in message:
            self.send({"jsonrpc": "2.0", "id": message["id"], "result": {"sessions": []}})
            return True
        if method == "$/cancelRequest" and "id" not in message:
            claim = key((message.get("params") or {}).get("id"))
            if claim in self.claims and claim not in self.released:
                self.released.add(claim)
                return True
            return False
        if method == "userQuestions/attachWait" and "id" in message:
            params = message.get("params") or {}
            next_is_claim = (
                self.expecting is not None
                and self.expecting.message.get("method") == "userQuestions/attachWait"
            )
            if next_is_claim or params.get("callId") not in self.ask_calls.values():
                return False
            self.claims[key(message["id"])] = params["callId"]
            token = params.get("partialResultToken")
            progress = {"token": token, "value": {"remainingMs": 60_000}}
            self.send({"jsonrpc": "2.0", "method": "$/progress", "params": progress})
            return True
        return False

    def serve_extras(self) -> None:
        """After the last step: the door's extras only, until end of input."""
        self.expecting = None
        while (message := self.inbox.get()) is not None:
            self.extra(message, "after the transcript's end")

    def report(self, problem: str | None, done: bool = False) -> dict[str, Any]:
        return {**super().report(problem), "done": done}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("transcript", type=Path)
    parser.add_argument("--report", type=Path, required=True)
    parser.add_argument("--log", type=Path)
    parser.add_argument("--cue", type=Path)
    parser.add_argument("--omit-asks", action="store_true")
    args = parser.parse_args(argv)
    transcript = Transcript.load(args.transcript)
    player = DoorPlayer(transcript, args.omit_asks, sys.stdout.buffer, args.log, args.cue)
    problem = None
    try:
        player.play(sys.stdin.fileno())
        args.report.write_text(json.dumps(player.report(None, done=True), indent=1))
        player.serve_extras()
    except Mismatch as exc:
        problem = str(exc)
        recent = player.exchange[-8:]
        problem += "\nlatest messages:\n" + "\n".join(f"  {w}: {json.dumps(m)}" for w, m in recent)
        print(f"web transcript player ({args.transcript.name}): {problem}", file=sys.stderr)
    args.report.write_text(json.dumps(player.report(problem, done=problem is None), indent=1))
    return 0 if problem is None else 1


if __name__ == "__main__":
    sys.exit(main())
