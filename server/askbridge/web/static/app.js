// askbridge web page (behavior.md B3–B8). No framework, nothing fetched from elsewhere.
// Cards (cards.js) are keyed DOM elements made once and updated in place, so an update
// never wipes what the user is typing.
"use strict";

const S = { client: null, cards: new Map(), views: {}, sessions: {}, dismissed: new Set(),
  held: new Set(), claimed: new Set(), stopped: new Map(), els: new Map(), es: null, retry: 1000,
  reconnect: 0, live: false };
const $ = (id) => document.getElementById(id);
let focused = document.hasFocus() && document.visibilityState === "visible";

// -- tiny safe Markdown (B3: never raw HTML) ------------------------------------------
function esc(t) {
  return String(t).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}
function inline(t) {
  return esc(t)
    .replace(/`([^`]+)`/g, "<code>$1</code>")
    .replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>")
    .replace(/\*([^*]+)\*/g, "<em>$1</em>")
    .replace(/\[([^\]]+)\]\((https?:\/\/[^)\s]+)\)/g, '<a href="$2" rel="noopener noreferrer" target="_blank">$1</a>');
}
function markdown(src) {
  const out = []; const lines = String(src).split("\n"); let list = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    // CommonMark fences: ``` or ~~~ (3 or more) opens a block, and only a fence of the same
    // character at least as long closes it. The server makes an approval's fence longer
    // than any backtick run in the command, so a ``` line inside it stays code (S17).
    const open = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(line);
    if (open && !(open[1][0] === "`" && open[2].includes("`"))) {
      const fence = open[1]; const code = []; i++;
      const closes = (l) => {
        const c = /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(l);
        return c !== null && c[1][0] === fence[0] && c[1].length >= fence.length;
      };
      while (i < lines.length && !closes(lines[i])) code.push(lines[i++]);
      if (list) { out.push("</ul>"); list = false; }
      out.push("<pre><code>" + esc(code.join("\n")) + "</code></pre>"); continue;
    }
    const item = /^\s*[-*+] (.*)$/.exec(line);
    if (item) { if (!list) { out.push("<ul>"); list = true; } out.push("<li>" + inline(item[1]) + "</li>"); continue; }
    if (list) { out.push("</ul>"); list = false; }
    const h = /^(#{1,6}) (.*)$/.exec(line);
    if (h) out.push(`<p><strong>${inline(h[2])}</strong></p>`);
    else if (line.trim()) out.push("<p>" + inline(line) + "</p>");
  }
  if (list) out.push("</ul>");
  return out.join("");
}

// -- the API ----------------------------------------------------------------------------
// S14: the session cookie alone is refused; each request also carries the key the login
// gave this page, kept per origin (another port's page never sees it).
const KEY = "askbridge-key";
function sessionKey() { try { return localStorage.getItem(KEY) || ""; } catch (e) { return ""; } }
async function post(path, body) {
  const r = await fetch(path, { method: "POST", body: JSON.stringify(body), credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-Askbridge-Session": sessionKey() } });
  let data = {}; try { data = await r.json(); } catch (e) { /* empty body */ }
  return { status: r.status, data };
}

async function start() {
  const m = /token=([0-9a-f]+)/.exec(location.hash);
  if (m) {
    const r = await post("/api/login", { token: m[1] });
    history.replaceState(null, "", location.pathname);  // the token leaves the address bar
    if (r.data.key) { try { localStorage.setItem(KEY, r.data.key); } catch (e) { /* private mode */ } }
    if (r.data.error) $("login").textContent = r.data.error.message;  // e.g. the token expired
  }
  connect();
}

function connect() {
  // One stream at a time: "Retry" (or a reconnect) drops the reconnect still scheduled,
  // whose second stream would resync the page again and redraw a card the person is
  // filling in (seen: the selection lost between a click and "Answer").
  clearTimeout(S.reconnect);
  if (S.es) S.es.close();
  const es = S.es = new EventSource("/api/events?key=" + encodeURIComponent(sessionKey()));
  es.onmessage = (e) => { S.retry = 1000; handle(JSON.parse(e.data)); };
  es.onerror = async () => {
    es.close(); S.live = false; S.claimed.clear();
    let status = 0;
    try {
      const r = await fetch("/api/ping", { credentials: "same-origin", headers: { "X-Askbridge-Session": sessionKey() } });
      status = r.status;
      if (r.status === 401) { const e = (await r.json()).error; if (e.code === "TOKEN_EXPIRED") $("login").textContent = e.message; }
    } catch (e) { status = 0; }
    $("login").hidden = status !== 401;
    $("stopped").hidden = status === 401;
    $("status").textContent = status === 401 ? "not logged in" : "askbridge stopped";
    if (status !== 401 && S.es === es) { S.reconnect = setTimeout(connect, S.retry); S.retry = Math.min(S.retry * 2, 15000); }
  };
}

function handle(ev) {
  if (ev.type === "state") {  // B6: the whole state; nothing stale stays, nothing twice
    S.client = ev.client; S.live = true; S.sessions = ev.sessions; S.views = ev.views;
    S.cards = new Map(); S.claimed.clear();
    for (const c of ev.cards) addCard(c);
    // A card still open as it was keeps its element, and with it what the person has
    // selected or typed (a phone that slept mid-answer); every other element goes.
    // The same id with other content (a restarted host numbers afresh) is a new card.
    const continued = new Map(wanted().late.map((c) => [c.key, c]));
    for (const [key, el] of S.els) {
      const c = S.cards.get(key) || continued.get(key);
      if (!c || el.classList.contains("closed") || signature(el.shown) !== signature(c)) { el.remove(); S.els.delete(key); }
    }
    $("stopped").hidden = true; $("login").hidden = true; $("status").textContent = "connected";
    document.dispatchEvent(new Event("askbridge:connected"));  // push.js: logged in now
  } else if (ev.type === "card") {
    const known = S.cards.has(ev.card.id);
    addCard(ev.card);
    if (!known) { announce(ev.card); showNew(S.cards.get(ev.card.id)); }
  } else if (ev.type === "closed") {
    const c = S.cards.get(ev.cardId);
    if (c) { c.closed = ev.reason; S.claimed.delete(c.id); }
  } else if (ev.type === "view") {
    S.views[ev.sessionId] = ev.view;
  } else if (ev.type === "session") {
    S.sessions[ev.sessionId] = { title: ev.title, origin: ev.origin };
  }
  // A new card is drawn at once (showNew); the rest follows in the next task: the render
  // of every card (once for the events that came together: the host sends a question's
  // view with its card) and the claims. A card that arrives while the page is looked
  // at is still claimed at once (B4), but starting a fetch costs more than drawing the
  // card, and neither is what the person waits to see (page vs window).
  if (ev.type === "state") render(); else renderSoon();
  setTimeout(claimChanges, 0);
}
function claimChanges() { if (syncClaims()) tick(); }
let renderTimer = null;
function renderSoon() {
  if (renderTimer === null) renderTimer = setTimeout(() => { renderTimer = null; render(); }, 0);
}

function addCard(c) {
  const old = S.cards.get(c.id);
  c.deadline = c.remainingMs == null ? null : performance.now() + c.remainingMs;
  if (old) { c.closed = old.closed; c.sent = old.sent; c.sending = old.sending; c.seen = old.seen; } else c.seen = performance.now();
  // What the page's own claim stopped at, when the claim began before the deadline was known.
  if (S.claimed.has(c.id) && S.stopped.get(c.id) == null && c.remainingMs != null) S.stopped.set(c.id, c.remainingMs);
  S.cards.set(c.id, c);
}

// -- notifications (B7; the "Notify me" button and Web Push are push.js's) -----------------
function announce(card) {
  if (!document.hidden || !("Notification" in window) || Notification.permission !== "granted") return;
  new Notification("askbridge: a question", { body: card.questions[0].question, tag: card.id });
}
$("retry").onclick = () => { S.retry = 1000; connect(); };
startCards();
start();
