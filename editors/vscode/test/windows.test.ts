/**
 * Several windows on one data directory (behavior.md H2, M1–M4): each window
 * is the extension's logic (QuestionHandler, ContinuedQuestions,
 * SessionClient, the withdrawal notices) on its own `askbridge serve`, all in
 * the default `--host auto`, so they attach to one `askbridge host`.
 *
 * Window A creates a session and prompts; window B opens it (`session/load`,
 * "Open Session…") while A's first question is on screen and gets the card
 * too (M3). Answering in B closes A's card with "answered in another window",
 * and the model got B's answer (M2). The next question shows in both at once;
 * A answers it. A third window that opens the session later gets the open
 * question and answers first, closing two cards. Dismissing a card in one
 * window ends the question for all ("no longer needs"); a countdown running
 * out in one window makes it pending for all, and the other window is told so; the question that
 * went pending is answered late from the other window's Waiting Questions (L4).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import { after, before, describe, test } from "node:test";

import { CancellationTokenSource } from "vscode-jsonrpc";

import { QuestionItem } from "../src/protocol";
import {
  ASKBRIDGE_BIN,
  ServerUnderTest,
  ShownCard,
  askStep,
  choose,
  startServer,
  stopHost,
  tempDataDir,
  toolResultText,
  waitFor,
} from "./harness";

const question = (id: string, header: string, text: string): QuestionItem => ({
  id,
  header,
  question: text,
  options: [{ label: "Yes" }, { label: "No" }],
});
const FIRST = question("db", "Setup", "Use SQLite?");
const SECOND = question("ci", "CI", "Run the tests on every push?");
const THIRD = question("docs", "Docs", "Write a README?");
const FOURTH = question("deploy", "Deploy", "Deploy now?");
const FIFTH = question("lint", "Lint", "Add a linter?");
const timed = (callId: string, q: QuestionItem) => askStep(callId, [q], { timeout: 600 });
const STEPS = [
  timed("call-first", FIRST),
  timed("call-second", SECOND),
  timed("call-third", THIRD),
  timed("call-fourth", FOURTH),
  timed("call-fifth", FIFTH),
  { text: "carrying on without the linter answer" },
  { text: "got the late linter answer" },
];

/** The next card a window shows, checked to be `q`'s pick card. */
async function cardOf(window: ServerUnderTest, q: QuestionItem): Promise<ShownCard & { kind: "pick" }> {
  const card = await window.ui.nextCard();
  if (card.kind !== "pick") throw new Error(`expected a pick card, got ${card.kind}`);
  assert.equal(card.card.question, q.question);
  return card;
}

async function toolText(window: ServerUnderTest, callId: string): Promise<string> {
  const update = await waitFor(`the result of ${callId}`, () =>
    window.updatesOf("tool_call_update").find((u) => u.toolCallId === callId && u.status !== "in_progress"),
  );
  return toolResultText(update);
}

const answered = (q: QuestionItem) =>
  `askbridge: "${q.header}: ${q.question}" was answered in another window; its card here was closed.`;

describe("several windows on one data directory", () => {
  const dataDir = tempDataDir();
  let a: ServerUnderTest;
  let b: ServerUnderTest;
  let sessionId: string;
  let prompt: Promise<{ stopReason: string }>;
  before(async () => {
    a = await startServer(STEPS, { askMode: "timed" }, dataDir);
    b = await startServer([], {}, dataDir);
  });
  after(async () => {
    await a.shutdown();
    await b.shutdown();
    stopHost(dataDir);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  test("H2: both windows' servers are front doors of one host", () => {
    const status = spawnSync(ASKBRIDGE_BIN, ["host", "--status", "--data-dir", dataDir], { encoding: "utf8" });
    assert.equal(status.status, 0, status.stderr);
    assert.match(status.stdout, /^front doors attached: 2$/m);
  });

  test("M3/M2: B opens A's session while A's question is on screen and gets the card; B's answer wins and A's card closes, saying so", async () => {
    sessionId = await a.sessions.newSession();
    prompt = a.sessions.prompt("set up the project");
    const cardA = await cardOf(a, FIRST);
    assert.equal(b.ui.shown.length, 0, "B follows nothing yet");
    await b.sessions.load(sessionId); // "askbridge: Open Session…"
    assert.deepEqual(b.sessions.followed, [sessionId]);
    const cardB = await cardOf(b, FIRST);
    choose(cardB, ["No"]);
    await waitFor("A's card closed by the server", () => cardA.closed);
    assert.deepEqual(await waitFor("A's notice", () => a.notices.length > 0 && a.notices), [answered(FIRST)]);
    assert.deepEqual(b.notices, [], "nothing to tell the window that answered");
    const expected = { answers: [{ id: "db", selected: ["No"] }] };
    assert.deepEqual(JSON.parse(await toolText(a, "call-first")), expected, "the model got B's answer");
    assert.deepEqual(JSON.parse(await toolText(b, "call-first")), expected, "B sees the session's updates too");
  });

  test("M2: the next question shows in both windows at once; A answers, B's card closes", async () => {
    const [cardA, cardB] = await Promise.all([cardOf(a, SECOND), cardOf(b, SECOND)]);
    choose(cardA, ["Yes"]);
    await waitFor("B's card closed", () => cardB.closed);
    assert.deepEqual(await waitFor("B's notice", () => b.notices.length > 0 && b.notices), [answered(SECOND)]);
    assert.deepEqual(JSON.parse(await toolText(a, "call-second")), { answers: [{ id: "ci", selected: ["Yes"] }] });
  });

  test("M3: a third window that opens the session later gets the open question; its answer closes the two others", async () => {
    const [cardA, cardB] = await Promise.all([cardOf(a, THIRD), cardOf(b, THIRD)]);
    const c = await startServer([], {}, dataDir);
    try {
      await c.sessions.load(sessionId);
      choose(await cardOf(c, THIRD), ["Yes"]);
      await waitFor("both cards closed", () => cardA.closed && cardB.closed);
      assert.deepEqual(await waitFor("A's notices", () => a.notices.length > 1 && a.notices.slice(1)), [
        answered(THIRD),
      ]);
      assert.deepEqual(await waitFor("B's notices", () => b.notices.length > 1 && b.notices.slice(1)), [
        answered(THIRD),
      ]);
      assert.deepEqual(JSON.parse(await toolText(a, "call-third")), { answers: [{ id: "docs", selected: ["Yes"] }] });
    } finally {
      await c.shutdown(); // C leaves; A and B still follow the session (M6 does not apply)
    }
  });

  // The fan-out's contract (server/askbridge/host/fanout.py): ASK_CANCELLED or ASK_TIMED_OUT
  // from any window ends the question for all.

  test("M2: dismissing the card in one window ends the question in all: the other's card closes, the agent no longer needs it", async () => {
    const [cardA, cardB] = await Promise.all([cardOf(a, FOURTH), cardOf(b, FOURTH)]);
    cardA.resolve(undefined); // Esc in A: ASK_CANCELLED
    try {
      await waitFor("B's card closed", () => cardB.closed, 5000);
      assert.equal(
        await waitFor("B's notice", () => b.notices[2]),
        'askbridge: "Deploy: Deploy now?" was closed: the agent no longer needs this answer (the turn was cancelled, or the question was dismissed in another window).',
      );
      assert.match(await toolText(a, "call-fourth"), /^Error: the user cancelled ask_user_question/);
    } finally {
      if (!cardB.closed) choose(cardB, ["No"]);
      await toolText(a, "call-fourth");
    }
  });

  test("TW7/M2: A's countdown runs out, the question goes pending for all; B is told", async () => {
    const [cardA, cardB] = await Promise.all([cardOf(a, FIFTH), cardOf(b, FIFTH)]);
    await waitFor("A's countdown", () => cardA.ctx.canTakeTime);
    a.timers.advance(601_000); // A's local countdown: ASK_TIMED_OUT → pending (TW7)
    try {
      await waitFor("B's card closed", () => cardB.closed, 5000);
      assert.equal(
        await waitFor("B's notice", () => b.notices[3]),
        'askbridge: "Lint: Add a linter?" was closed: the agent stopped waiting (its time ran out, or it went away). It is under Waiting Questions, where you can still answer it.',
      );
      assert.equal(JSON.parse(await toolText(a, "call-fifth")).pending, true);
    } finally {
      if (!cardB.closed) b.timers.advance(601_000); // B's countdown too: now it is pending
      await toolText(a, "call-fifth");
    }
  });

  test("L4: a question that went pending is answered late from B's Waiting Questions; the agent's inbox turn runs", async () => {
    const entry = await waitFor("B's waiting question", () =>
      b.continued.entries().find((e) => e.callId === "call-fifth"),
    );
    const outcome = b.continued.answer(entry, b.ui, new CancellationTokenSource().token);
    choose(await b.ui.nextCard(), ["Yes"]);
    assert.equal(await outcome, "accepted");
    await waitFor("the inbox turn in A", () =>
      a.updatesOf("agent_message_chunk").find((u) => u.content?.text === "got the late linter answer"),
    );
    assert.equal((await prompt).stopReason, "end_turn");
  });
});
