// askbridge web page: the cards (B3, B4): claims, drawing, rendering, countdowns.
// Loaded before app.js, which owns the state (S), the API and the event stream; the
// functions here run from its events and from what startCards() sets up.
"use strict";

// -- claims (B4) ------------------------------------------------------------------------
// The page holds a timed card's wait in two ways. A *look*: the page is visible and
// focused, and the person touched it (pointer, key, wheel, scroll, focus) or the card
// arrived less than LOOK_MS ago; a page left open with nobody at it stops holding after
// LOOK_MS, so it never turns a timed question into a blocking one. A *hold*: typing or
// choosing in the card, or "Take time", keeps the claim until the card is answered or
// dismissed. While either holds, the host's timer is stopped and the card says so; the
// deadline itself never moves (TW5), so what it shows is the time that was left.
const LOOK_MS = 20000;
let lastLook = performance.now();
let lookLapsed = false;  // a look ran out: the next input claims again at once
function looked() {
  lastLook = performance.now();
  if (lookLapsed) { lookLapsed = false; claimChanges(); }
}
function looking(c) { return focused && performance.now() - Math.max(lastLook, c.seen || 0) < LOOK_MS; }
function leftMs(c) { return c.deadline == null ? null : Math.max(0, c.deadline - performance.now()); }

function syncClaims() {  // true when it claimed or released something
  let changed = false;
  for (const c of S.cards.values()) {
    const mine = S.claimed.has(c.id);
    const open = S.live && c.timed && !c.closed && !c.sent && !S.dismissed.has(c.id);
    const look = looking(c);
    if (open && focused && !look && !S.held.has(c.id)) lookLapsed = true;
    // A count that ran out is not claimed again: the question is on its way to Continued.
    const ranOut = !mine && !c.claimed && leftMs(c) === 0;
    const want = open && (S.held.has(c.id) || look) && !ranOut;
    if (want && !mine) {
      S.claimed.add(c.id); S.stopped.set(c.id, leftMs(c)); changed = true;
      post(`/api/cards/${c.id}/claim`, { client: S.client }).then((r) => {
        // The door answers with the time left on the host's clock when the claim began.
        if (S.claimed.has(c.id) && r.data && Number.isInteger(r.data.remainingMs)) { S.stopped.set(c.id, r.data.remainingMs); tick(); }
      });
    } else if (!want && mine) {
      S.claimed.delete(c.id); S.stopped.delete(c.id); c.claimed = false; changed = true;
      // An answered or closed card's claim ended with it at the door: nothing to release.
      if (!c.sent && !c.sending && !c.closed) post(`/api/cards/${c.id}/release`, { client: S.client });
    }
  }
  return changed;
}
function setFocus() { focused = document.visibilityState === "visible" && document.hasFocus(); if (focused) looked(); syncClaims(); render(); }

// What keeps the claims and countdowns current; app.js calls it once its state exists.
function startCards() {
  for (const type of ["pointerdown", "pointermove", "keydown", "wheel", "touchstart", "scroll"])
    window.addEventListener(type, looked, { capture: true, passive: true });
  window.addEventListener("focus", () => { focused = document.visibilityState === "visible"; looked(); syncClaims(); render(); });
  window.addEventListener("blur", () => { focused = false; syncClaims(); render(); });
  document.addEventListener("visibilitychange", setFocus);
  setInterval(tick, 250);
}

// -- cards (B3) -------------------------------------------------------------------------
// A card's text is set as text, never parsed as HTML (B3): this is also what keeps
// drawing a new card cheap, since each innerHTML runs the HTML parser, ~0.15-0.2 ms of
// a card's ~0.7-0.9 ms first draw (measured in this page, Chromium).
function textEl(tag, className, text) {
  const e = document.createElement(tag); if (className) e.className = className; e.textContent = String(text); return e;
}
function sessionName(sid) {
  const s = S.sessions[sid]; return (s && s.title) || sid;
}

function questionBlock(q, card) {
  const box = document.createElement("fieldset");
  box.className = "q"; box.dataset.qid = q.id; box.style.border = "0"; box.style.padding = "0";
  const legend = document.createElement("legend");
  if (q.header) legend.append(textEl("div", "header", q.header));
  legend.append(textEl("div", "question", q.question));
  box.append(legend);
  const intent = q.intent || {};
  if (intent.kind === "approval" && intent.subject) {
    const p = document.createElement("div"); p.className = "meta"; p.textContent = "Tool: " + intent.subject.name; box.append(p);
  }
  if (q.detail) { const d = document.createElement("div"); d.className = "detail"; d.innerHTML = markdown(q.detail); box.append(d); }
  const opts = q.options || [];
  if (intent.kind === "approval" || intent.kind === "plan-review") {
    if (intent.kind === "plan-review") {
      const t = document.createElement("textarea"); t.className = "other"; t.rows = 2;
      t.setAttribute("aria-label", "Feedback (sent with Keep planning)"); t.placeholder = "Feedback for the agent";
      box.append(t);
    }
    const row = document.createElement("div"); row.className = "actions";
    const labels = intent.kind === "approval"
      ? [intent.approve, intent.always, intent.reject].filter(Boolean)
      : [intent.approve, ...opts.map((o) => o.label).filter((l) => l !== intent.approve)];
    for (const label of labels) {
      const b = document.createElement("button"); b.type = "button"; b.textContent = label;
      b.className = label === intent.approve ? "primary" : (label === intent.reject ? "deny" : "");
      b.onclick = () => {
        const fb = box.querySelector("textarea.other");
        const custom = fb && fb.value.trim() && label !== intent.approve ? fb.value.trim() : undefined;
        send(card, [{ id: q.id, selected: custom ? [] : [label], ...(custom ? { custom } : {}) }]);
      };
      row.append(b);
    }
    box.append(row); box.dataset.intent = intent.kind;
    return box;
  }
  const name = `${card.key}-${q.id}`;
  for (const o of opts) {
    const l = document.createElement("label"); l.className = "option";
    const i = document.createElement("input"); i.type = q.multiSelect ? "checkbox" : "radio"; i.name = name; i.value = o.label;
    const span = document.createElement("span"); span.append(textEl("span", "label", o.label));
    if (o.description) span.append(textEl("small", "", o.description));
    l.append(i, span); box.append(l);
  }
  const other = document.createElement(opts.length ? "input" : "textarea");
  if (opts.length) other.type = "text";
  // F2/F3: on a single choice Other replaces the choice, so the two never show together;
  // on a multi-select it is sent beside the ticked choices.
  other.className = "other";
  other.placeholder = !opts.length ? "Your answer" : (q.multiSelect ? "Other (added to the choices)" : "Other (replaces the choice)");
  other.setAttribute("aria-label", opts.length ? `Other answer to: ${q.question}` : `Answer to: ${q.question}`);
  if (opts.length && !q.multiSelect) {
    other.addEventListener("input", () => {
      if (other.value.trim()) box.querySelectorAll("input[type=radio]").forEach((r) => { r.checked = false; });
    });
    box.addEventListener("change", (e) => { if (e.target.type === "radio" && e.target.checked) other.value = ""; });
  }
  box.append(other);
  return box;
}

function collect(el, questions) {
  return questions.map((q) => {
    const box = el.querySelector(`fieldset[data-qid="${CSS.escape(q.id)}"]`);
    const selected = [...box.querySelectorAll("input:checked")].map((i) => i.value);
    const other = box.querySelector(".other"); const custom = other && other.value.trim();
    return { id: q.id, selected: custom && !q.multiSelect ? [] : selected, ...(custom ? { custom } : {}) };
  });
}

function signature(card) { return JSON.stringify([card.sessionId, card.callId, card.timed, card.questions]); }

function cardElement(card) {
  const el = document.createElement("article"); el.shown = card;  // compared at a resync only
  el.className = "card"; el.dataset.key = card.key; el.setAttribute("aria-label", card.questions[0].question);
  const meta = document.createElement("div"); meta.className = "meta";
  const sess = textEl("span", "sess", ""); const countdown = textEl("span", "countdown", "");
  meta.append(sess, countdown); el.append(meta);
  for (const q of card.questions) el.append(questionBlock(q, card));
  const note = document.createElement("div"); note.className = "note"; note.setAttribute("role", "status");
  const row = document.createElement("div"); row.className = "actions";
  const plain = !card.questions.some((q) => q.intent && (q.intent.kind === "approval" || q.intent.kind === "plan-review"));
  if (plain) {
    const b = document.createElement("button"); b.type = "button"; b.className = "primary submit"; b.textContent = "Answer";
    b.onclick = () => send(card, collect(el, card.questions)); row.append(b);
  }
  let take = null;
  if (card.timed) {
    const t = take = document.createElement("button"); t.type = "button"; t.className = "take-time"; t.textContent = "Take time";
    t.onclick = () => { S.held.add(card.id); syncClaims(); render(); }; row.append(t);
  }
  const d = document.createElement("button"); d.type = "button"; d.className = "dismiss"; d.textContent = "Dismiss";
  d.onclick = () => { S.dismissed.add(card.key); if (card.id) S.dismissed.add(card.id); S.held.delete(card.id); syncClaims(); render(); };
  row.append(d);
  el.append(row, note);
  el.parts = { note, countdown, sess, take };
  el.addEventListener("input", () => { if (card.timed && card.id) { S.held.add(card.id); syncClaims(); render(); } });
  return el;
}

async function send(shown, answers) {
  const card = (shown.id && S.cards.get(shown.id)) || shown;  // the element may outlive a resync
  const el = S.els.get(card.key || shown.key); const note = el.querySelector(".note");
  const path = card.late ? `/api/sessions/${encodeURIComponent(card.sessionId)}/calls/${encodeURIComponent(card.callId)}/answer`
    : `/api/cards/${card.id}/answer`;
  card.sending = true;  // its own "closed" event may come before this answer's response
  const r = await post(path, { answer: { answers } });
  if (r.status === 200) { note.className = "note ok"; note.textContent = card.late ? "Sent: the agent gets it as a late reply." : "Sent."; card.sent = true; S.held.delete(card.id); }
  else if (r.status === 409) { note.className = "note"; note.textContent = "Answered elsewhere."; card.sent = true; S.held.delete(card.id); }
  else { note.className = "note err"; note.textContent = (r.data.error && r.data.error.message) || `error ${r.status}`; card.sending = false; }
  syncClaims(); render();
}

// -- rendering --------------------------------------------------------------------------
function wanted() {
  const live = []; const late = [];
  const liveCalls = new Set();
  for (const c of S.cards.values()) {
    c.key = c.id; const view = c.callId && S.views[c.sessionId];
    const entry = view && view.active.find((e) => e.callId === c.callId);
    if (c.closed === "withdrawn" && entry && entry.state === "continued") continue;  // now a continued card
    if (c.callId && !c.closed) liveCalls.add(`${c.sessionId}/${c.callId}`);
    live.push(c);
  }
  for (const [sid, view] of Object.entries(S.views)) {
    for (const e of view.active) {
      const key = `late:${sid}/${e.callId}`;
      if (e.state === "continued" && !liveCalls.has(`${sid}/${e.callId}`))
        late.push({ key, late: true, sessionId: sid, callId: e.callId, questions: e.questions });
    }
  }
  return { live, late };
}

function settledHere(card) {
  const view = S.views[card.sessionId];
  return view && card.callId && view.settled.some((s) => s.callId === card.callId);
}

// A new open card, as render() will place it, before render() runs: unless the page
// shows its question as continued already (then render() decides).
function showNew(card) {
  if (card.closed || S.els.has(card.id) || S.els.has(`late:${card.sessionId}/${card.callId}`)) return;
  card.key = card.id;
  place(card, $("cards"), new Set());
  $("empty").hidden = true;
}

// Every event renders every card, so a card that did not change costs only comparisons:
// no DOM writes, no queries. A card that closed (sent from here, answered elsewhere, no
// longer asked) shrinks to its question and a note saying why, then goes (settle), so
// "Questions" lists only what is still open.
const SETTLED_MS = 4000;
function place(card, parent, keep) {
  keep.add(card.key);
  let el = S.els.get(card.key);
  if (!el) { el = cardElement(card); S.els.set(card.key, el); parent.append(el); }
  const hide = S.dismissed.has(card.key); if (el.hidden !== hide) el.hidden = hide;
  if (el.parts.take && el.parts.take.disabled !== S.held.has(card.id)) el.parts.take.disabled = S.held.has(card.id);
  if (!card.late && (card.closed || card.sent)) {
    if (!card.sent) {
      show(el.parts.note, card.closed === "answered" ? (card.sending ? "Sent." : "Answered in another browser.") : (settledHere(card) || !card.callId ? "Answered elsewhere." : "No longer asked."));
    }
    if (!el.classList.contains("closed")) settle(card, el);
  }
  if (card.late && !S.views[card.sessionId].active.some((e) => e.callId === card.callId) && !card.sent) {
    show(el.parts.note, "Answered elsewhere.");
  }
  show(el.parts.countdown, countdown(card));
  show(el.parts.sess, sessionName(card.sessionId));  // titles come later
}

function settle(card, el) {
  el.classList.add("closed", "settled");
  el.querySelectorAll("button, input, textarea").forEach((x) => { x.disabled = true; });
  setTimeout(() => {
    el.remove();
    if (S.els.get(card.key) === el) S.els.delete(card.key);
    if (S.cards.get(card.id) && (S.cards.get(card.id).closed || S.cards.get(card.id).sent)) S.cards.delete(card.id);
    render();
  }, SETTLED_MS);
}

function render() {
  const { live, late } = wanted();
  const keep = new Set();
  for (const c of live) place(c, $("cards"), keep);
  for (const c of late) { const prev = S.els.has(c.key); place(c, $("continued"), keep); if (!prev) S.els.get(c.key).dataset.late = "1"; }
  for (const [key, el] of S.els) {
    if (!keep.has(key)) {
      if (key.startsWith("late:") && !el.dataset.gone) {  // a settled continued card says so, then goes
        el.dataset.gone = "1"; el.classList.add("closed");
        const note = el.querySelector(".note"); if (!note.textContent) note.textContent = "Answered elsewhere.";
        setTimeout(() => { el.remove(); if (S.els.get(key) === el) S.els.delete(key); }, SETTLED_MS);
      } else if (!key.startsWith("late:")) { el.remove(); S.els.delete(key); }
    }
  }
  const open = live.filter((c) => !c.closed && !c.sent && !S.dismissed.has(c.key)).length;
  const cont = late.filter((c) => !S.dismissed.has(c.key)).length;
  $("empty").hidden = open > 0 || !S.live;  // without the stream the page cannot know
  document.title = (open ? `(${open}) ` : "") + "askbridge" + (cont ? ` · ${cont} continued` : "");
}

// While a claim holds the wait the number does not tick: it is what was left when the
// clock stopped. Unclaimed, it counts down the host's deadline.
function countdown(card) {
  if (card.late) return "continued";
  if (!card.timed || card.closed || card.sent) return "";
  const secs = (ms) => `${Math.ceil(ms / 1000)} s`;
  if (S.claimed.has(card.id)) {
    const ms = S.stopped.get(card.id);
    const why = S.held.has(card.id) ? "clock stopped until you answer" : "clock stopped while you look";
    return ms == null ? why : `${why} · ${secs(ms)} were left`;
  }
  if (card.claimed) return "clock stopped in another browser";
  const ms = leftMs(card);
  if (ms == null) return "timed";
  if (ms === 0) return "time is up: the agent goes on without it";
  return focused ? `${secs(ms)} left · touch the page to stop the clock` : `${secs(ms)} left`;
}
function show(el, text) { if (el.textContent !== text) el.textContent = text; }
function tick() {
  syncClaims();  // a look that ran out releases its claims here
  for (const c of S.cards.values()) { const el = S.els.get(c.key); if (el) show(el.parts.countdown, countdown(c)); }
}
