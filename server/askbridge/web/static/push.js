// Notifications (behavior.md B7, R7). "Notify me" asks the browser's permission, then
// registers the service worker (sw.js) and subscribes it to the browser's push service
// with the door's VAPID key, and gives the subscription to the door: a question then
// reaches this browser with the page closed. A push carries no question text; the page
// fetches the questions itself. Where the browser cannot reach a push service (no
// service configured, offline, a headless browser), the page says so and keeps its
// own notifications while it is open. Uses app.js's `$`, `post` and `sessionKey`.
"use strict";

const PUSH = { reg: null, sub: null };
// A browser that cannot reach its push service may never settle subscribe() (seen: a
// Chromium profile without one waits on it for good), so the page stops waiting then.
const SUBSCRIBE_MS = 20000;
const canNotify = "Notification" in window;
const canPush = canNotify && "serviceWorker" in navigator && "PushManager" in window;

function pushNote(text) { const el = $("push-note"); el.textContent = text; el.hidden = !text; }
function notifyButton(label) { const b = $("notify"); b.textContent = label || ""; b.hidden = !label; }

function keyBytes(text) {  // base64url → the bytes pushManager.subscribe wants
  const bin = atob(text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

async function doorKey() {
  const r = await fetch("/api/push/key", { credentials: "same-origin", headers: { "X-Askbridge-Session": sessionKey() } });
  let data = {}; try { data = await r.json(); } catch (e) { /* empty body */ }
  if (!r.ok) throw new Error(data.error ? data.error.message : `the door answered ${r.status}`);
  return data.publicKey;
}

async function tellDoor(sub) {
  const r = await post("/api/push/subscribe", sub.toJSON());
  if (r.status !== 200) throw new Error(r.data.error ? r.data.error.message : `the door answered ${r.status}`);
}

async function notifyMe() {
  $("notify").disabled = true;
  try {
    const permission = await Notification.requestPermission();
    if (permission !== "granted") { notifyButton(null); pushNote("Notifications are blocked for this page in the browser's settings."); return; }
    if (!canPush) { notifyButton(null); pushNote("This browser notifies only while this page is open: it has no push messaging."); return; }
    PUSH.reg = await navigator.serviceWorker.register("/sw.js");
    const reg = await navigator.serviceWorker.ready;
    const key = keyBytes(await doorKey());
    let sub;
    try {
      sub = await Promise.race([
        reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key }),
        new Promise((_, fail) => setTimeout(() => fail(new Error(`no answer in ${SUBSCRIBE_MS / 1000} s`)), SUBSCRIBE_MS)),
      ]);
    } catch (e) {
      notifyButton("Notify me");
      pushNote(`Notifications need a push service this browser cannot reach (${e.message || e.name}). ` +
        "While this page is open it still notifies you.");
      return;
    }
    await tellDoor(sub);
    PUSH.sub = sub; pushNote(""); notifyButton("Stop notifications");
  } catch (e) {
    pushNote(`Notifications could not be set up: ${e.message || e}`);
  } finally {
    $("notify").disabled = false;
  }
}

async function stopNotifying() {
  const sub = PUSH.sub; PUSH.sub = null; notifyButton("Notify me");
  try { await post("/api/push/unsubscribe", { endpoint: sub.endpoint }); await sub.unsubscribe(); } catch (e) { /* gone already */ }
}

// A subscription this browser already has is given to the door again once connected:
// the door keeps subscriptions in memory, so a restarted door would not know it.
async function resumePush() {
  if (!canPush || Notification.permission !== "granted") return;
  try {
    const reg = await navigator.serviceWorker.getRegistration("/");
    const sub = reg ? await reg.pushManager.getSubscription() : null;
    if (!sub) { notifyButton("Notify me"); return; }
    await tellDoor(sub);
    PUSH.reg = reg; PUSH.sub = sub; notifyButton("Stop notifications");
  } catch (e) {
    pushNote(`Notifications could not be resumed: ${e.message || e}`);
  }
}

if (canNotify && Notification.permission !== "denied") {
  if (Notification.permission === "default") notifyButton("Notify me");
  $("notify").onclick = () => (PUSH.sub ? stopNotifying() : notifyMe());
  document.addEventListener("askbridge:connected", resumePush, { once: true });
}
