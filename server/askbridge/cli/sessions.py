"""`askbridge sessions` — what a data directory holds, for a person to read.

    askbridge sessions [list] [--data-dir D]      one line per root session
    askbridge sessions show ID [--data-dir D]     that session's log as a transcript

A listing line is `<id>  <created>  <title>  <status>`, the status counting
turns and questions (pending: asked and not settled, i.e. open or continued;
settled: answered). The transcript shows prompts, agent text, each question
with its options, answers, pending results, late replies (queued, withdrawn,
admitted), other tool calls and results, and turn ends.

It reads through `open_store_read_only`: no lock, nothing written, so it works
while a server holds the directory and sees everything that server has
committed. It reads through the store's API (store_api.py), in an event loop of
its own, as any store is read. The decoding, damage checks and event vocabulary are the store's
(store_sqlite.py, host/log/events.py, projection_parse.py, projection_outcomes.py);
nothing is re-parsed here.
Exit status 0; 1 with one line on stderr when the directory or the session does
not exist or the store is damaged (a damaged session in a listing is shown as
such, the others still listed, and the status is 1).
Every line is printed through `escaped` (S17): a control character or escape
sequence in a model's or client's text is shown, never obeyed by the terminal.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from askbridge.process.log_lines import escaped

if TYPE_CHECKING:
    from askbridge.host.store.store_api import EventStore

_ELLIPSIS_AT = 300  # characters of a non-question tool's arguments or result shown


def add_sessions_parser(sub: Any) -> None:
    """Register `sessions` on the top-level subparsers (cli.py)."""
    sessions = sub.add_parser(
        "sessions",
        help="list the stored sessions, or show one",
        description="Read a data directory's sessions without disturbing a server that holds "
        "it (read-only, no lock). `askbridge sessions` (or `sessions list`) prints one line per "
        "root session: id, created, title, turns, questions pending (asked, not answered yet) "
        "and settled (answered). `askbridge sessions show ID` prints that session as a "
        "transcript: prompts, agent text, questions and their answers, late replies.",
    )
    sessions.add_argument(
        "--data-dir", help="where sessions live (default $XDG_STATE_HOME/askbridge)"
    )
    # metavar: a wrong action is reported as "choose from list, show", not by the dest name.
    actions = sessions.add_subparsers(dest="sessions_action", metavar="{list,show}")
    listing = actions.add_parser("list", help="one line per root session (the default)")
    listing.add_argument("--data-dir", default=argparse.SUPPRESS, help="as for `sessions`")
    show = actions.add_parser("show", help="print a session's log as a readable transcript")
    show.add_argument("session_id", metavar="ID")
    show.add_argument("--data-dir", default=argparse.SUPPRESS, help="as for `sessions`")


def run_sessions(args: argparse.Namespace) -> int:
    import anyio

    return anyio.run(_sessions, args)


async def _sessions(args: argparse.Namespace) -> int:
    from askbridge.core.errors import SessionError
    from askbridge.host.store.datadir import open_store_read_only, resolve_data_dir
    from askbridge.host.store.store_api import StoreError

    try:
        store = open_store_read_only(resolve_data_dir(args.data_dir))
    except StoreError as exc:
        return _fail(exc.message)
    try:
        if getattr(args, "sessions_action", None) in (None, "list"):
            return await _list(store)
        if not await store.exists(args.session_id):
            return _fail(SessionError.unknown(args.session_id).message)
        for line in transcript(await store.load(args.session_id)):
            print(escaped(line))  # S17: a model's text never drives the terminal
        return 0
    except StoreError as exc:
        return _fail(exc.message)
    except BrokenPipeError:  # `askbridge sessions | head`: the reader has all it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    finally:
        await store.close()


def _fail(message: str) -> int:
    print(escaped(f"askbridge: {message}"), file=sys.stderr)
    return 1


async def _list(store: EventStore) -> int:
    from askbridge.host.log.events import ROOT_ORIGINS
    from askbridge.host.store.store_api import StoreDamaged

    status = 0
    for info in await store.list_sessions():
        if info.origin not in ROOT_ORIGINS:  # an MCP agent's session is listed too (X1)
            continue
        try:
            summary = session_status(await store.load(info.session_id))
        except StoreDamaged as exc:
            summary, status = f"DAMAGED: {exc.message}", 1
        title = info.title or "(untitled)"
        print(escaped(f"{info.session_id}  {info.created_at}  {title}  {summary}"))
    return status


def session_status(events: list[dict[str, Any]]) -> str:
    from askbridge.host.log.events import TURN_START

    turns = sum(1 for event in events if event.get("type") == TURN_START)
    states = list(_question_states(events).values())
    return (
        f"{_count(turns, 'turn')}, questions: {states.count('pending')} pending, "
        f"{states.count('settled')} settled"
    )


def _question_states(events: list[dict[str, Any]]) -> dict[str, str]:
    """Each asked call's state, `pending` or `settled`, in either ask mode. The question
    view's fold tracks timed calls only; a blocking question answered in its turn is
    settled too, so the listing walks the log itself (same readers as the fold, P3/P4)."""
    from askbridge.host.log import events as ev
    from askbridge.host.log.projection_outcomes import read_tool_outcome
    from askbridge.host.log.projection_parse import ASK_USER_QUESTION, parse_questions

    states: dict[str, str] = {}
    for event in events:
        kind = event.get("type")
        if kind == ev.TOOL_CALL and event.get("name") == ASK_USER_QUESTION:
            call_id = event.get("callId")
            if isinstance(call_id, str) and parse_questions(event.get("arguments")) is not None:
                states[call_id] = "pending"
        elif kind == ev.TOOL_RESULT and event.get("callId") in states:
            outcome = read_tool_outcome(event)
            if isinstance(outcome, list):
                states[str(event["callId"])] = "settled"
            elif outcome is None:  # withdrawn or failed: no longer a question
                del states[str(event["callId"])]
        elif kind == ev.USER_MESSAGE:
            source = _dict(event.get("source"))
            call_id = str(source.get("callId"))
            if source.get("kind") == ev.REPLY_SOURCE_KIND and states.get(call_id) == "pending":
                states[call_id] = "settled"  # P4: a late reply settles its call
    return states


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def transcript(events: list[dict[str, Any]]) -> Iterable[str]:
    """The readable lines of one session's log (its header first)."""
    from askbridge.host.log import events as ev

    header = events[0]
    yield f"session {header.get('sessionId')}  {header.get('title') or '(untitled)'}"
    model = header.get("model") or {}
    ask = header.get("askUserQuestion") or {}
    yield (
        f"  created {header.get('createdAt')}  origin {header.get('origin')}  "
        f"cwd {header.get('cwd')}  model {model.get('kind', '?')}  "
        f"ask_user_question {ask.get('mode', 'legacy')}"
    )
    if header.get("parentSessionId"):
        yield f"  delegated from session {header['parentSessionId']}"
    handlers: dict[str, Callable[[dict[str, Any]], Iterable[str]]] = {
        ev.SESSION_HEADER: lambda e: (),
        ev.REQUEST_HEADER: lambda e: (),  # the tools the model saw: noise for a reader
        ev.INBOX_CLAIMED: lambda e: (),  # the user/message beside it says it
        ev.TURN_START: lambda e: [f"--- turn {e.get('turnId')} ({e.get('cause')})"],
        ev.TURN_END: _turn_end,
        ev.ASSISTANT_MESSAGE: lambda e: _block("agent: ", e.get("text")) if e.get("text") else (),
        ev.TOOL_CALL: _tool_call,
        ev.TOOL_RESULT: _tool_result,
        ev.USER_MESSAGE: _user_message,
        ev.INBOX_INSERTED: _inbox_inserted,
        ev.INBOX_DISCARDED: lambda e: [
            f"queued message {e.get('inboxId')} withdrawn ({e.get('reason')})"
        ],
    }
    for event in events:
        handler = handlers.get(str(event.get("type")))
        yield from handler(event) if handler else [f"({event.get('type')}) {_short(event)}"]


def _turn_end(event: dict[str, Any]) -> Iterable[str]:
    line = f"--- turn {event.get('turnId')} ended: {event.get('stopReason')}"
    error = event.get("error")
    if isinstance(error, dict):
        line += f" ({error.get('code')}: {error.get('message', '')})"
    return [line]


def _tool_call(event: dict[str, Any]) -> Iterable[str]:
    from askbridge.host.log.projection_parse import ASK_USER_QUESTION, parse_questions

    name, call_id, arguments = event.get("name"), event.get("callId"), event.get("arguments")
    questions = parse_questions(arguments) if name == ASK_USER_QUESTION else None
    if questions is None:
        return [f"agent calls {name} ({call_id}): {_short(arguments)}"]
    timeout = arguments.get("timeout") if isinstance(arguments, dict) else None
    wait = {None: "", -1: ", no timeout"}.get(timeout, f", timeout {timeout} s")
    lines = [f"agent asks ({call_id}{wait}):"]
    for question in questions:
        header = f"[{question['header']}] " if question.get("header") else ""
        multi = " (several may be chosen)" if question.get("multiSelect") else ""
        lines.append(f"  ? {header}{question['question']}  [{question['id']}]{multi}")
        for option in question.get("options", ()):
            about = f" — {option['description']}" if option.get("description") else ""
            lines.append(f"      - {option['label']}{about}")
    return lines


def _tool_result(event: dict[str, Any]) -> Iterable[str]:
    from askbridge.host.log.projection_outcomes import read_tool_outcome
    from askbridge.host.log.projection_parse import ASK_USER_QUESTION
    from askbridge.protocol.errors import ErrorCode

    call_id = event.get("callId")
    error = _dict(event.get("error"))
    if event.get("name") == ASK_USER_QUESTION:
        outcome = read_tool_outcome(event)
        if error.get("code") == ErrorCode.TOOL_OUTCOME_UNKNOWN:
            return [f"  -> {call_id}: interrupted, outcome unknown; still answerable"]
        if isinstance(outcome, list):
            return [f"  -> {call_id} answered: {_answers(outcome)}"]
        if outcome is not None:
            return [f"  -> {call_id}: pending (no answer before the timeout; still answerable)"]
    if event.get("isError"):
        return [f"  -> {call_id} failed ({error.get('code', '?')}): {_short(event.get('content'))}"]
    return [f"  -> {call_id}: {_short(event.get('content'))}"]


def _user_message(event: dict[str, Any]) -> Iterable[str]:
    from askbridge.host.log.events import REPLY_SOURCE_KIND
    from askbridge.host.log.projection_outcomes import read_reply

    source = _dict(event.get("source"))
    if source.get("kind") == REPLY_SOURCE_KIND:
        answers = read_reply(event)
        return [f"user: late reply to {source.get('callId')} admitted: {_answers(answers)}"]
    return _block("user: ", _text(event.get("content")))


def _inbox_inserted(event: dict[str, Any]) -> Iterable[str]:
    from askbridge.host.log.events import REPLY_SOURCE_KIND
    from askbridge.host.log.projection_outcomes import read_reply

    message = _dict(event.get("message"))
    source = _dict(message.get("source"))
    if source.get("kind") == REPLY_SOURCE_KIND:
        answers = read_reply(message)
        return [f"late reply to {source.get('callId')} queued: {_answers(answers)}"]
    return _block(f"user (queued, {event.get('delivery')}): ", _text(message.get("content")))


def _answers(answers: Iterable[dict[str, Any]]) -> str:
    parts = []
    for item in answers:
        chosen = ", ".join(item.get("selected", ()))
        if item.get("custom") is not None:
            chosen = (
                f"{chosen} + {json.dumps(item['custom'])}" if chosen else json.dumps(item["custom"])
            )
        parts.append(f"{item.get('id')}: {chosen or '(skipped)'}")
    return "; ".join(parts) or "(no readable answers)"


def _dict(value: Any) -> dict[str, Any]:
    """`value` when the log holds an object there, else an empty one (the log may be odd)."""
    return value if isinstance(value, dict) else {}


def _text(content: Any) -> str:
    if not isinstance(content, list):
        return ""
    return "\n".join(str(block.get("text", "")) for block in content if isinstance(block, dict))


def _block(prefix: str, text: Any) -> list[str]:
    """`prefix` + text, continuation lines indented under it."""
    lines = str(text).split("\n")  # only newlines: a lone \r is shown, not obeyed
    pad = " " * len(prefix)
    return [prefix + lines[0], *(pad + line for line in lines[1:])]


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = text.replace("\n", " ")
    return text if len(text) <= _ELLIPSIS_AT else text[: _ELLIPSIS_AT - 1] + "…"
