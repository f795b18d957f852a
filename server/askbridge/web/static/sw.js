// askbridge service worker (behavior.md R7): a push says only that a question waits.
// Its payload, when there is one, is a marker without text ({"waits": "question"}); the
// page shows the questions itself, fetched over its authenticated API once it is open.
"use strict";

const TITLE = "askbridge: a question waits";

self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));

self.addEventListener("push", (event) => {
  let escalated = false;
  try { escalated = event.data !== null && event.data.json().waits === "escalation"; } catch (e) { /* no marker */ }
  // One notification at a time (the tag): ten questions are still "a question waits".
  event.waitUntil(self.registration.showNotification(TITLE, {
    body: escalated ? "A question was passed on to you." : "Open askbridge to answer it.",
    tag: "askbridge-waits",
    renotify: true,
  }));
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  event.waitUntil((async () => {
    const scope = new URL(self.registration.scope);
    const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
    const open = windows.find((w) => new URL(w.url).origin === scope.origin);
    if (open) return open.focus();
    return self.clients.openWindow(scope.href);
  })());
});
