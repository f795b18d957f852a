"""B2, B8: the web door's JSON API, every 4xx, against the real door and host.

No browser here: httpx speaks to the door as a foreign page or a script would.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
from webstack import start_door, stop_door, web_stack

DB = {"id": "db", "question": "Which database?", "options": [{"label": "SQLite"}, {"label": "Pg"}]}


async def logged_in(st: Any) -> httpx.AsyncClient:
    """A client with the door's session as a page holds it: the cookie and the key header."""
    client = httpx.AsyncClient(base_url=st.door.base, timeout=10)
    r = await client.post("/api/login", json={"token": st.door.token})
    assert r.status_code == 200 and "HttpOnly" in r.headers["set-cookie"]
    assert "SameSite=Strict" in r.headers["set-cookie"]
    client.headers["X-Askbridge-Session"] = r.json()["key"]
    return client


def error_code(r: httpx.Response) -> str:
    return str(r.json()["error"]["code"])


async def first_event(
    client: httpx.AsyncClient, found: Callable[[dict[str, Any]], Any], what: str
) -> Any:
    """`found(event)` of the first event of the door's stream for which it is not None
    (the stream opens with the state, B6's resync, then the live events)."""
    import json

    with anyio.fail_after(20):
        async with client.stream("GET", "/api/events") as stream:
            async for line in stream.aiter_lines():
                if line.startswith("data: "):
                    result = found(json.loads(line[6:]))
                    if result is not None:
                        return result
    raise AssertionError(what)


async def first_card(client: httpx.AsyncClient) -> dict[str, Any]:
    """The first card the event stream announces (its state, or a later card event)."""

    def card(event: dict[str, Any]) -> dict[str, Any] | None:
        cards = event.get("cards") or ([event["card"]] if "card" in event else [])
        return dict(cards[0]) if cards else None

    result: dict[str, Any] = await first_event(client, card, "no card")
    return result


async def until_closed(client: httpx.AsyncClient, card_id: str) -> None:
    """Until the door has closed `card_id`: its state no longer holds it, or a `closed`
    event names it. The agent hears "pending" from the host and the door hears of the
    withdrawal on its own connection: either can come first."""

    def closed(event: dict[str, Any]) -> bool | None:
        if event.get("type") == "state":
            return all(c["id"] != card_id for c in event.get("cards", [])) or None
        return (event.get("type") == "closed" and event.get("cardId") == card_id) or None

    await first_event(client, closed, f"{card_id} stayed open")


async def test_B2_401_without_the_cookie_and_with_a_wrong_token(tmp_path: Path) -> None:
    async with web_stack(tmp_path) as st:
        async with httpx.AsyncClient(base_url=st.door.base) as c:
            for path in ("/api/events", "/api/ping"):
                r = await c.get(path)
                assert r.status_code == 401 and error_code(r) == "UNAUTHORIZED"
            r = await c.post("/api/cards/c-1/answer", json={})
            assert r.status_code == 401
            r = await c.post("/api/login", json={"token": "0" * 64})
            assert r.status_code == 401
            assert (await c.get("/")).status_code == 200  # the page itself holds no data


async def test_B2_403_for_a_foreign_host_or_origin(tmp_path: Path) -> None:
    async with web_stack(tmp_path) as st:
        client = await logged_in(st)
        r = await client.get("/api/ping", headers={"Host": "evil.example:8765"})
        assert r.status_code == 403 and error_code(r) == "FORBIDDEN_HOST"  # DNS rebinding
        r = await client.post(
            "/api/login", json={"token": st.door.token}, headers={"Origin": "https://evil.example"}
        )
        assert r.status_code == 403 and error_code(r) == "FORBIDDEN_ORIGIN"
        r = await client.get("/api/ping", headers={"Origin": st.door.base})
        assert r.status_code == 200
        assert "access-control-allow-origin" not in r.headers  # no CORS
        await client.aclose()


async def test_B2_token_file_is_private_stable_and_replaced_by_new_token(tmp_path: Path) -> None:
    async with web_stack(tmp_path) as st:
        path = st.data_dir / "web.token"
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        assert path.read_text().split("\n")[0] == st.door.token and len(st.door.token) == 64
        again = await start_door(st.data_dir)
        assert again.token == st.door.token  # stable across restarts
        assert await stop_door(again) == 0
        fresh = await start_door(st.data_dir, "--new-token")
        assert fresh.token != st.door.token
        await stop_door(fresh)


async def test_B8_bad_input_is_400_unknown_is_404_lost_is_409(tmp_path: Path) -> None:
    async with web_stack(tmp_path, clock=True) as st:
        client = await logged_in(st)
        r = await client.post("/api/cards/c-999/answer", json={"answer": {"answers": []}})
        assert r.status_code == 404 and error_code(r) == "UNKNOWN_CARD"
        r = await client.post("/api/sessions/s-nope/calls/c/answer", json={"answer": {}})
        assert r.status_code == 404 and error_code(r) == "UNKNOWN_SESSION"
        r = await client.post("/api/cards/c-1/claim", json={"client": 5})
        assert r.status_code == 400
        result = st.ask_soon([DB], timeout=1)
        card = await first_card(client)
        url = f"/api/cards/{card['id']}/answer"
        r = await client.post(
            url, content=b"not json", headers={"Content-Type": "application/json"}
        )
        assert r.status_code == 400 and error_code(r) == "BAD_REQUEST"
        bad = {"answers": [{"id": "db", "selected": ["MySQL"]}]}  # V8: not an option
        r = await client.post(url, json={"answer": bad})
        assert r.status_code == 400 and error_code(r) == "BAD_ANSWER"
        too_long = {"answers": [{"id": "db", "selected": [], "custom": "x" * 65537}]}  # S1
        r = await client.post(url, json={"answer": too_long})
        assert r.status_code == 400 and error_code(r) == "BAD_ANSWER"
        await st.advance(1000)  # the deadline passes with the door's card unanswered
        pending = await result()
        assert pending["pending"] is True
        await until_closed(client, card["id"])  # a reply before this is a late reply, taken
        good = {"answers": [{"id": "db", "selected": ["SQLite"]}]}
        r = await client.post(url, json={"answer": good})
        assert r.status_code == 409 and error_code(r) == "ANSWERED_ELSEWHERE"
        # The continued question takes a late reply once; the second one lost.
        sid = card["sessionId"]
        late = f"/api/sessions/{sid}/calls/{card['callId']}/answer"
        with anyio.fail_after(10):
            while True:
                r = await client.post(late, json={"answer": good})
                if r.status_code != 404:  # the view's continued change may still be on its way
                    break
                await anyio.sleep(0.05)
        assert r.status_code == 200, r.text
        r = await client.post(late, json={"answer": good})
        assert r.status_code == 409 and error_code(r) in ("REPLY_QUEUED", "ANSWERED_ELSEWHERE")
        r = await client.post(f"/api/sessions/{sid}/calls/nope/answer", json={"answer": good})
        assert r.status_code == 404 and error_code(r) == "UNKNOWN_CALL"
        assert (await client.get("/api/ping")).status_code == 200  # B8: still serving
        await client.aclose()


async def test_B1_bad_flags_are_usage_errors() -> None:
    import asyncio

    from webstack import ASKBRIDGE

    for args in (["--listen", "nonsense"], ["--tls-cert", "c.pem"]):
        proc = await asyncio.create_subprocess_exec(
            ASKBRIDGE, "web", *args, stderr=asyncio.subprocess.PIPE
        )
        _, err = await proc.communicate()
        assert proc.returncode == 2
        assert err.decode().startswith("askbridge web: error: ") and err.count(b"\n") == 1


async def test_B1_tls_serves_https_with_a_secure_cookie(tmp_path: Path) -> None:
    import subprocess

    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(  # noqa: ASYNC221 - before anything else runs: nothing to block
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )
    async with web_stack(tmp_path) as st:
        door = await start_door(st.data_dir, "--tls-cert", str(cert), "--tls-key", str(key))
        try:
            assert door.base.startswith("https://")
            async with httpx.AsyncClient(base_url=door.base, verify=False) as c:
                r = await c.post("/api/login", json={"token": door.token})
                assert r.status_code == 200 and "Secure" in r.headers["set-cookie"]
                assert r.headers["set-cookie"].startswith("__Host-")
                c.headers["X-Askbridge-Session"] = r.json()["key"]
                assert (await c.get("/api/ping")).status_code == 200
        finally:
            await stop_door(door)


async def test_B8_an_oversized_body_is_413_and_broken_http_is_400(tmp_path: Path) -> None:
    """Both before anything is read or asked; the door keeps serving (B8)."""
    async with web_stack(tmp_path) as st:
        client = await logged_in(st)
        r = await client.post("/api/cards/c-1/answer", content=b"x" * (2 << 20))
        assert r.status_code == 413 and r.json()["error"]["code"] == "HTTP"
        host, port = st.door.base.removeprefix("http://").rsplit(":", 1)
        stream = await anyio.connect_tcp(host, int(port))
        async with stream:
            await stream.send(b"NOT HTTP AT ALL\r\n\r\n")
            raw = b""
            with anyio.fail_after(10):
                while b"\r\n\r\n" not in raw:
                    raw += await stream.receive()
        assert raw.startswith(b"HTTP/1.1 400 ")
        assert (await client.get("/api/ping")).status_code == 200
        await client.aclose()
