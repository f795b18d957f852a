"""S14 (and B2, B8): the web door's attack surface, attacked against the real door and host.

- A browser's cookie for 127.0.0.1 reaches every port: a listener on a second
  loopback port collects it from real Chromium and replays it.
- `--new-token` from another process ends a running door's sessions at once.
- An expired token (a crafted token file) is refused, on the page and on stderr.
- Unauthenticated bytes cost the door nothing: refused after the head, before
  the body; 256 connections at most; every response carries the security headers;
  bad JSON of any depth is 400.

The cookie and session rules do not depend on the host mode (the door is the same
in both), so these run in the default one; the start-up tests are test_web_start.py.
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from webstack import Door, spawn_door, start_door, stop_door, web_stack

KEY_HEADER = "X-Askbridge-Session"
SECURITY = {
    "content-security-policy": "frame-ancestors 'none'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}


async def login(base: str, token: str) -> tuple[httpx.AsyncClient, str]:
    """A client holding a session as the page does: the cookie, and the key in a header."""
    client = httpx.AsyncClient(base_url=base, timeout=10)
    r = await client.post("/api/login", json={"token": token})
    assert r.status_code == 200, r.text
    key = str(r.json()["key"])
    client.headers[KEY_HEADER] = key
    return client, key


def host_port(door: Door) -> tuple[str, int]:
    host, port = door.base.removeprefix("http://").rsplit(":", 1)
    return host, int(port)


async def raw_exchange(door: Door, data: bytes, timeout: float = 5) -> bytes:
    """Send `data` on a fresh connection; the response head the door sends back."""
    host, port = host_port(door)
    async with await anyio.connect_tcp(host, port) as stream:
        await stream.send(data)
        got = b""
        with anyio.fail_after(timeout):
            while b"\r\n\r\n" not in got:
                got += await stream.receive()
    return got


async def test_S14_a_cookie_sent_to_another_port_is_not_the_token_and_useless_alone(
    tmp_path: Path,
) -> None:
    """Real Chromium logs in, then visits another service on 127.0.0.1 (what a link
    from another local user does): that service gets the door's cookie. Replayed with
    or without a made-up key header it is 401; the token is in no cookie."""
    seen: list[bytes] = []

    async def other_service(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(await reader.readuntil(b"\r\n\r\n"))
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nhi")
        await writer.drain()
        writer.close()

    other = await asyncio.start_server(other_service, "127.0.0.1", 0)
    other_port = other.sockets[0].getsockname()[1]
    try:
        async with web_stack(tmp_path) as st:
            page = await st.page()
            await page.goto(f"http://127.0.0.1:{other_port}/")
            await page.goto(st.door.base + "/")  # back to the door: its session still works
            await page.locator("#status", has_text="connected").wait_for()
            leaked = next(
                line.split(b":", 1)[1].strip().decode()
                for line in seen[0].split(b"\r\n")
                if line.lower().startswith(b"cookie:")
            )
            _, door_port = host_port(st.door)
            assert f"askbridge-{door_port}=" in leaked  # the browser did send it
            assert st.door.token not in leaked
            for cookie in await page.context.cookies():
                assert st.door.token not in cookie["value"]
                assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
            async with httpx.AsyncClient(base_url=st.door.base, timeout=10) as mallory:
                for headers in ({}, {KEY_HEADER: "guess"}, {KEY_HEADER: leaked.split("=", 1)[1]}):
                    h = {"Cookie": leaked, **headers}
                    assert (await mallory.get("/api/ping", headers=h)).status_code == 401
                    r = await mallory.get("/api/events", headers=h)
                    assert r.status_code == 401
                    ok = {"answers": [{"id": "approval", "selected": ["Allow"]}]}
                    r = await mallory.post("/api/cards/c-1/answer", json={"answer": ok}, headers=h)
                    assert r.status_code == 401
                r = await mallory.get("/api/events", params={"key": "guess"}, headers=h)
                assert r.status_code == 401
            # The page itself, with its key, is served.
            status = await page.evaluate(
                """async () => (await fetch("/api/ping", {headers:
                    {"X-Askbridge-Session": localStorage.getItem("askbridge-key")}})).status"""
            )
            assert status == 200
    finally:
        other.close()
        await other.wait_closed()


async def test_S14_new_token_from_another_process_ends_every_session_at_once(
    tmp_path: Path,
) -> None:
    """`askbridge web --new-token` (here a second door on another port) replaces the
    token: the running door's sessions are 401 at once and its open event stream
    ends; the new URL logs in at the running door."""
    async with web_stack(tmp_path, browser=False) as st:
        client, _ = await login(st.door.base, st.door.token)
        other, _ = await login(st.door.base, st.door.token)
        assert (await client.get("/api/ping")).status_code == 200
        ended = anyio.Event()

        async def watch() -> None:
            async with client.stream("GET", "/api/events") as events:
                async for _ in events.aiter_lines():
                    pass
            ended.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(watch)
            await anyio.sleep(0.5)
            fresh = await start_door(st.data_dir, "--new-token")
            try:
                assert fresh.token != st.door.token
                for c in (client, other):
                    r = await c.get("/api/ping")
                    assert r.status_code == 401 and r.json()["error"]["code"] == "UNAUTHORIZED"
                with anyio.fail_after(5):
                    await ended.wait()
                r = await client.post("/api/login", json={"token": st.door.token})
                assert r.status_code == 401
                renewed, _ = await login(st.door.base, fresh.token)
                assert (await renewed.get("/api/ping")).status_code == 200
                await renewed.aclose()
            finally:
                await stop_door(fresh)
        await client.aclose()
        await other.aclose()


async def read_until(process: asyncio.subprocess.Process, pattern: str) -> list[str]:
    assert process.stderr is not None
    lines: list[str] = []
    with anyio.fail_after(30):
        while not lines or not re.search(pattern, lines[-1]):
            raw = await process.stderr.readline()
            assert raw, f"askbridge web exited: {lines}"
            lines.append(raw.decode().rstrip())
    return lines


async def test_S14_an_expired_token_is_refused_on_the_page_and_on_stderr(tmp_path: Path) -> None:
    """A token file made 31 days ago (the default --token-ttl is 30 days): the door says
    on stderr to use --new-token, a login with it is 401 TOKEN_EXPIRED, and the page
    says why. A longer --token-ttl accepts the same file; --new-token makes a fresh one."""
    data_dir = tmp_path / "data"
    data_dir.mkdir(mode=0o700)
    token = "ab" * 32
    (data_dir / "web.token").write_text(f"{token}\ncreated {int(time.time()) - 31 * 86400}\n")
    (data_dir / "web.token").chmod(0o600)
    process = await spawn_door(data_dir, host="inline")
    try:
        lines = await read_until(process, "expired")
        assert "--new-token" in lines[-1] and token not in lines[-1]
        port = listening_port(process.pid)
        base = f"http://127.0.0.1:{port}"
        async with httpx.AsyncClient(base_url=base, timeout=10) as c:
            r = await c.post("/api/login", json={"token": token})
            assert r.status_code == 401 and r.json()["error"]["code"] == "TOKEN_EXPIRED"
            assert "--new-token" in r.json()["error"]["message"]
            assert "set-cookie" not in r.headers
        told = await read_until(process, "expired")
        assert "a page gave the expired token" in told[-1] and "--new-token" in told[-1]
        from webstack import chromium

        async with chromium() as browser:
            door = Door(process, f"{base}/#token={token}", base, token)
            context = await browser.new_context()
            page = await context.new_page()
            await page.goto(door.url)
            await page.locator("#login", has_text="expired").wait_for()
            assert "--new-token" in (await page.locator("#login").text_content() or "")
    finally:
        process.terminate()
        await process.wait()
    longer = await start_door(data_dir, "--token-ttl", "40d")
    assert longer.token == token  # the same file, not expired under a longer lifetime
    await stop_door(longer)
    fresh = await start_door(data_dir, "--new-token")
    assert fresh.token != token
    client, _ = await login(fresh.base, fresh.token)
    assert (await client.get("/api/ping")).status_code == 200
    await client.aclose()
    await stop_door(fresh)


def listening_port(pid: int) -> int:
    """The TCP port process `pid` listens on (it printed no URL: its token expired)."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
            return int(fields[1].split(":")[1], 16)
    raise AssertionError("the door listens on no TCP port")


def test_S14_a_session_ends_when_its_token_expires_on_the_injected_clock(tmp_path: Path) -> None:
    """A running door's sessions end with their token's lifetime (wall clock injected)."""
    from askbridge.web.session import Sessions
    from askbridge.web.token import TokenFile, parse_ttl

    now = [1_000_000.0]
    tokens = TokenFile(tmp_path, parse_ttl("1h"), wall=lambda: now[0])
    token = tokens.load()
    sessions = Sessions(tokens)
    sid, key = sessions.open(token)
    assert sessions.valid(sid, key)
    assert not sessions.valid(sid, None) and not sessions.valid(None, key)
    assert not sessions.valid(sid, key + "x") and not sessions.valid(key, sid)
    now[0] += 3599
    assert sessions.valid(sid, key)
    now[0] += 1
    assert tokens.expired(token) and not sessions.valid(sid, key)
    assert [parse_ttl(t) for t in ("3600", "90m", "12h", "30d", "2w")] == [
        3600,
        5400,
        43200,
        2592000,
        1209600,
    ]
    for bad in ("0", "-5", "5x", "", "d"):
        with pytest.raises(ValueError):
            parse_ttl(bad)


async def test_S14_every_response_carries_the_security_headers(tmp_path: Path) -> None:
    """200, 400, 401, 403, 404, 405, 413 and 431 alike (the 503 is the connection cap test's)."""
    async with web_stack(tmp_path, browser=False) as st:
        client, _ = await login(st.door.base, st.door.token)
        async with httpx.AsyncClient(base_url=st.door.base, timeout=10) as anon:
            responses = {
                200: await anon.get("/"),
                400: await client.post("/api/cards/c-1/claim", content=b"{nope"),
                401: await anon.get("/api/ping"),
                403: await anon.get("/api/ping", headers={"Host": "evil.example"}),
                404: await client.get("/api/nothing"),
                405: await client.get("/api/login"),
                413: await anon.post("/api/login", content=b"x" * 4096),
                431: await anon.get("/", headers={"X-Big": "x" * (70 * 1024)}),
            }
        for status, r in responses.items():
            assert r.status_code == status, (status, r.text)
            for name, part in SECURITY.items():
                assert part in r.headers.get(name, ""), (status, name, r.headers)
        await client.aclose()


async def test_S14_B8_bad_json_of_any_depth_is_400_never_500(tmp_path: Path) -> None:
    """Nesting past the parser's depth, NaN and Infinity are a 400 BAD_REQUEST, before
    login and after, and nothing reaches the door's stderr."""
    async with web_stack(tmp_path, browser=False) as st:
        client, _ = await login(st.door.base, st.door.token)
        bodies = [b"[" * 100_000, b'{"a":' * 50_000, b'{"answer": NaN}', b'{"x": -Infinity}']
        for body in bodies:
            r = await client.post("/api/cards/c-1/answer", content=body)
            assert r.status_code == 400 and r.json()["error"]["code"] == "BAD_REQUEST", r.text
        r = await client.post("/api/login", content=b"[" * 1000)  # under the login's 1 KiB
        assert r.status_code == 400
        assert (await client.get("/api/ping")).status_code == 200
        await client.aclose()
        assert await stop_door(st.door) == 0
        assert st.door.process.stderr is not None
        rest = (await st.door.process.stderr.read()).decode()
        assert "Traceback" not in rest and "Error" not in rest, rest


async def test_S14_a_body_is_refused_after_the_head_before_it_is_read(tmp_path: Path) -> None:
    """No session, a foreign Host, or a login body over 1 KiB: the answer comes while
    the promised 1 MiB body has not been sent at all. And a hundred clients sending
    1 MiB bodies unauthenticated leave the door's memory where it was."""
    async with web_stack(tmp_path, browser=False) as st:
        host = f"{host_port(st.door)[0]}:{host_port(st.door)[1]}"
        heads = {
            b"401": f"POST /api/cards/c-1/answer HTTP/1.1\r\nHost: {host}\r\n",
            b"403": "POST /api/login HTTP/1.1\r\nHost: evil.example\r\n",
            b"413": f"POST /api/login HTTP/1.1\r\nHost: {host}\r\n",
        }
        for status, head in heads.items():
            got = await raw_exchange(st.door, f"{head}Content-Length: 1048576\r\n\r\n".encode())
            assert got.startswith(b"HTTP/1.1 " + status), got

        rss_before = vm_rss(st.door.process.pid)
        body = b"x" * ((1 << 20) - 1)  # all but the last byte: the body never completes
        host_name, port = host_port(st.door)
        head = f"POST /api/cards/c-1/answer HTTP/1.1\r\nHost: {host}\r\n"
        head += f"Content-Length: {len(body) + 1}\r\n\r\n"
        flooders = [await anyio.connect_tcp(host_name, port) for _ in range(100)]

        async def flood(s: Any) -> None:
            try:
                await s.send(head.encode() + body)
            except (anyio.BrokenResourceError, OSError):
                pass  # the door answered and closed before taking the whole body

        try:
            with anyio.fail_after(30):
                async with anyio.create_task_group() as tg:
                    for s in flooders:
                        tg.start_soon(flood, s)
            await anyio.sleep(0.5)
            grown = vm_rss(st.door.process.pid) - rss_before  # the 100 clients still connected
        finally:
            for s in flooders:
                await s.aclose()
        assert grown < 24 * 1024, f"the door grew by {grown} KiB"


def vm_rss(pid: int) -> int:
    """Resident memory of `pid` in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


async def test_S14_the_257th_connection_gets_503_and_a_silent_one_is_cut_after_10s(
    tmp_path: Path,
) -> None:
    """256 connections that send nothing (slowloris) hold every place; the next one is
    503 at once, with the security headers. After the head deadline (10 s) the silent
    ones are closed and the door serves again."""
    async with web_stack(tmp_path, browser=False) as st:
        host, port = host_port(st.door)
        silent: list[Any] = []
        try:
            for _ in range(256):
                silent.append(await anyio.connect_tcp(host, port))
            await anyio.sleep(0.5)  # the door has accepted them all
            started = time.monotonic()
            got = await raw_exchange(
                st.door, f"GET / HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode()
            )
            assert got.startswith(b"HTTP/1.1 503"), got
            assert b"frame-ancestors 'none'" in got and b"nosniff" in got
            with anyio.fail_after(15):
                for s in silent:  # the door closes each at its head deadline
                    with pytest.raises((anyio.EndOfStream, anyio.BrokenResourceError)):
                        await s.receive()
            assert time.monotonic() - started > 5
        finally:
            for s in silent:
                await s.aclose()
        async with httpx.AsyncClient(base_url=st.door.base, timeout=10) as c:
            assert (await c.get("/api/ping")).status_code == 401  # served again
