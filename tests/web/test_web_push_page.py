"""R7 at the real door: the push endpoints behind the session (S14), the key that
outlives the door, the push libraries left unloaded until needed, and the page's
"Notify me" in real Chromium as far as it goes without a push service.

Headless Chromium reaches no push service: in Playwright's (incognito) contexts
`pushManager.subscribe` rejects at once, and in a profile on disk it never settles.
The page must say so in both, and its service worker must still be registered. The
worker's own part — a push becomes "askbridge: a question waits" — is shown by
handing it a push through the DevTools protocol (ServiceWorker.deliverPushMessage),
which is what a push service's delivery does inside the browser.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from push_service import Browser
from test_web_security import SECURITY, login
from webstack import (
    CHROMIUM,
    CHROMIUM_FLAGS,
    VIEWPORTS,
    Door,
    shot,
    start_door,
    stop_door,
    web_stack,
)

NO_PUSH_SERVICE = "Notifications need a push service this browser cannot reach"
PUSH_LIBRARIES = ("cryptography", "py_vapid", "http_ece", "httpx")
SUBSCRIBE_MS = 20000  # static/push.js


@asynccontextmanager
async def door_of(tmp_path: Path) -> AsyncIterator[Door]:
    door = await start_door(tmp_path / "data")
    try:
        yield door
    finally:
        await stop_door(door)


def a_subscription(endpoint: str = "https://fcm.googleapis.com/fcm/send/abc:APA91b") -> Any:
    """PushSubscription.toJSON() with the keys a real browser would make."""
    made = Browser("x", endpoint, b"", ec.generate_private_key(ec.SECP256R1()), os.urandom(16))
    return made.subscription


async def test_R7_S14_the_push_endpoints_need_the_session_and_check_what_they_take(
    tmp_path: Path,
) -> None:
    async with door_of(tmp_path) as door:
        sub = a_subscription()
        async with httpx.AsyncClient(base_url=door.base, timeout=10) as stranger:
            for method, path, body in [
                ("GET", "/api/push/key", None),
                ("POST", "/api/push/subscribe", sub),
                ("POST", "/api/push/unsubscribe", {"endpoint": sub["endpoint"]}),
            ]:
                r = await stranger.request(method, path, json=body)
                assert r.status_code == 401, (path, r.text)
                assert r.json()["error"]["code"] == "UNAUTHORIZED"
        client, _ = await login(door.base, door.token)
        try:
            r = await client.get("/api/push/key")
            assert r.status_code == 200
            for name, value in SECURITY.items():
                assert value in r.headers[name]
            assert len(r.json()["publicKey"]) == 87  # 65 bytes, base64url

            r = await client.post("/api/push/subscribe", json=sub)
            assert r.status_code == 200 and r.json() == {"ok": True}
            bad = {**sub, "endpoint": "http://127.0.0.1:9/push"}  # no loopback http at the door
            r = await client.post("/api/push/subscribe", json=bad)
            assert r.status_code == 400
            assert r.json()["error"] == {
                "code": "BAD_SUBSCRIPTION",
                "message": "endpoint must be https",
            }
            r = await client.post("/api/push/subscribe", content=b'{"endpoint": [')
            assert r.status_code == 400 and r.json()["error"]["code"] == "BAD_REQUEST"
            huge = {**sub, "padding": "x" * 5000}  # bounded before it is read (S14)
            r = await client.post("/api/push/subscribe", json=huge)
            assert r.status_code == 413

            gone = {"endpoint": sub["endpoint"]}
            r = await client.post("/api/push/unsubscribe", json=gone)
            assert r.json() == {"ok": True, "removed": True}
            r = await client.post("/api/push/unsubscribe", json=gone)
            assert r.json() == {"ok": True, "removed": False}

            r = await client.get("/sw.js")  # public, like the page: the worker holds nothing
            assert r.status_code == 200
            assert r.headers["content-type"] == "text/javascript; charset=utf-8"
            for name, value in SECURITY.items():
                assert value in r.headers[name]
        finally:
            await client.aclose()


async def test_R7_S5_the_key_outlives_the_door_in_a_private_file(tmp_path: Path) -> None:
    """A new key would orphan every browser's subscription: a restarted door has the same."""
    keys = []
    for _ in range(2):
        async with door_of(tmp_path) as door:
            client, _ = await login(door.base, door.token)
            keys.append((await client.get("/api/push/key")).json()["publicKey"])
            await client.aclose()
    assert keys[0] == keys[1]
    path = tmp_path / "data" / "web.vapid"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def loaded_native(pid: int) -> bool:
    """Whether process `pid` has cryptography's compiled module mapped (it is loaded)."""
    return "cryptography/hazmat/bindings/_rust" in Path(f"/proc/{pid}/maps").read_text()


async def test_R7_the_push_libraries_load_at_the_first_key_not_at_start_up(
    tmp_path: Path,
) -> None:
    """The door at work — logged in, its event stream open — has not loaded them (an
    idle door stays small: benchmarks/bench_web_idle.py); the first key loads them."""
    async with door_of(tmp_path) as door:
        client, key = await login(door.base, door.token)
        try:
            async with client.stream("GET", "/api/events", params={"key": key}) as events:
                async for line in events.aiter_lines():
                    if line.startswith("data:"):
                        break
            assert (await client.get("/api/ping")).status_code == 200
            assert not loaded_native(door.process.pid)
            assert (await client.get("/api/push/key")).status_code == 200
            assert loaded_native(door.process.pid)  # what the check above would see
        finally:
            await client.aclose()


def test_R7_importing_the_door_and_the_command_line_loads_no_push_library() -> None:
    code = (
        "import sys\n"
        "import askbridge.cli.entry, askbridge.web.main, askbridge.web.push_api\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {PUSH_LIBRARIES!r}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.replace("'", '"')) == []


async def worker_url(page: Any) -> str | None:
    return await page.evaluate(
        """async () => { const r = await navigator.serviceWorker.getRegistration("/");
        return r && r.active ? r.active.scriptURL : null; }"""
    )


@pytest.mark.parametrize("viewport", ["desktop", "phone"])
async def test_R7_notify_me_registers_the_worker_and_says_no_push_service_answers(
    tmp_path: Path, viewport: str
) -> None:
    """Playwright's context: subscribe() is rejected at once (no push service here)."""
    async with web_stack(tmp_path) as st:
        context = await st.browser.new_context(**VIEWPORTS[viewport])
        await context.grant_permissions(["notifications"], origin=st.door.base)
        page = await context.new_page()
        await page.goto(st.door.url)
        await page.locator("#status", has_text="connected").wait_for()
        button = page.get_by_role("button", name="Notify me")
        await button.click()
        note = page.locator("#push-note", has_text=NO_PUSH_SERVICE)
        await note.wait_for()
        assert await worker_url(page) == f"{st.door.base}/sw.js"
        assert await button.is_visible()  # it can be tried again
        assert await page.locator("#status", has_text="connected").is_visible()
        await shot(page, f"push-no-service-{viewport}")


async def test_R7_a_browser_whose_push_service_never_answers_is_told_so(tmp_path: Path) -> None:
    """A profile on disk: Chromium's subscribe() then waits for its push service for
    good; the page gives up after SUBSCRIBE_MS of its (Playwright's) clock."""
    from playwright.async_api import async_playwright

    async with web_stack(tmp_path, browser=False) as st, async_playwright() as pw:
        context = await pw.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=CHROMIUM, args=CHROMIUM_FLAGS
        )
        try:
            await context.clock.install()
            await context.grant_permissions(["notifications"], origin=st.door.base)
            page = await context.new_page()
            await page.goto(st.door.url)
            await page.locator("#status", has_text="connected").wait_for()
            await page.get_by_role("button", name="Notify me").click()
            with anyio.fail_after(10):  # resolves once the worker is active
                ready = "navigator.serviceWorker.ready.then((r) => r.active.scriptURL)"
                assert await page.evaluate(ready) == f"{st.door.base}/sw.js"
            note = page.locator("#push-note")
            assert await note.is_hidden()  # still waiting for the push service
            await page.clock.fast_forward(SUBSCRIBE_MS)
            await note.filter(has_text=f"{NO_PUSH_SERVICE} (no answer in 20 s)").wait_for()
            assert await worker_url(page) == f"{st.door.base}/sw.js"
        finally:
            await context.close()


async def test_R7_notifications_refused_by_the_person_are_said_plainly(tmp_path: Path) -> None:
    async with web_stack(tmp_path) as st:
        context = await st.browser.new_context()
        page = await context.new_page()  # no permission granted: headless denies it
        await page.goto(st.door.url)
        await page.locator("#status", has_text="connected").wait_for()
        await page.get_by_role("button", name="Notify me").click()
        await page.locator("#push-note", has_text="Notifications are blocked").wait_for()
        assert await worker_url(page) is None


async def test_R7_the_worker_turns_a_push_into_a_question_waits_without_text(
    tmp_path: Path,
) -> None:
    """A push handed to the registered worker (as a push service's delivery would be)
    shows one notification that says only that a question waits."""
    async with web_stack(tmp_path) as st:
        context = await st.browser.new_context()
        await context.grant_permissions(["notifications"], origin=st.door.base)
        page = await context.new_page()
        await page.goto(st.door.url)
        await page.locator("#status", has_text="connected").wait_for()
        await page.get_by_role("button", name="Notify me").click()
        await page.locator("#push-note", has_text=NO_PUSH_SERVICE).wait_for()
        cdp = await context.new_cdp_session(page)
        registrations: list[dict[str, Any]] = []
        told = anyio.Event()

        def updated(params: dict[str, Any]) -> None:
            registrations.extend(params["registrations"])
            told.set()

        cdp.on("ServiceWorker.workerRegistrationUpdated", updated)
        await cdp.send("ServiceWorker.enable")
        with anyio.fail_after(10):
            await told.wait()  # the registrations arrive as an event, after the enable
        rid = next(r["registrationId"] for r in registrations if not r["isDeleted"])
        for marker in ('{"waits":"question"}', '{"waits":"question"}', ""):
            await cdp.send(
                "ServiceWorker.deliverPushMessage",
                {"origin": st.door.base, "registrationId": rid, "data": marker},
            )
        with anyio.fail_after(10):
            shown = await page.evaluate(
                """async () => { const r = await navigator.serviceWorker.getRegistration("/");
                for (;;) {  // until the worker has shown what it shows
                  const n = await r.getNotifications();
                  if (n.length) return n.map((x) => [x.title, x.body, x.tag]);
                  await new Promise((ok) => setTimeout(ok, 20));
                } }"""
            )
        assert shown == [
            ["askbridge: a question waits", "Open askbridge to answer it.", "askbridge-waits"]
        ]
