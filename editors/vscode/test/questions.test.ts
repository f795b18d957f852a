/**
 * The extension's question logic (src/questions.ts, src/sessions.ts) against
 * the real `askbridge serve`: a script model asks, the scripted UI answers,
 * and the server's session updates show what the model received.
 * Rule ids (behavior.md / protocol.md) are in each test name.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { CancellationTokenSource } from "vscode-jsonrpc";

import { OTHER_LABEL } from "../src/questions";
import { Methods } from "../src/protocol";
import { ServerUnderTest, askStep, choose, startServer, toolResultText, type, waitFor } from "./harness";

const LANGS = {
  id: "langs",
  header: "Stack",
  question: "Which languages?",
  options: [{ label: "Python", description: "the server" }, { label: "Go" }, { label: "Rust" }],
  multi_select: true,
};
const DB = {
  id: "db",
  header: "Setup",
  question: "Which database?",
  options: [{ label: "SQLite" }, { label: "MySQL" }],
};
const NAME = { id: "name", question: "Project name?" };

async function finishedTool(server: ServerUnderTest, callId: string): Promise<Record<string, any>> {
  return waitFor(`tool_call_update for ${callId}`, () =>
    server.updatesOf("tool_call_update").find((u) => u.toolCallId === callId && u.status !== "in_progress"),
  );
}

describe("blocking asks (legacy mode, no wait)", () => {
  let server: ServerUnderTest;
  before(async () => {
    server = await startServer([
      askStep("call-multi", [LANGS]),
      { text: "noted" },
      askStep("call-two", [DB, NAME]),
      { text: "noted" },
      askStep("call-dismiss", [DB]),
      { text: "noted" },
    ]);
  });
  after(() => server.stop());

  test("V4: multi-select with Other sends selected labels plus custom text, the model receives it", async () => {
    const prompt = server.sessions.prompt("pick languages");
    const card = await server.ui.nextCard();
    assert.equal(card.kind, "pick");
    if (card.kind !== "pick") return;
    assert.equal(card.card.canPickMany, true);
    assert.deepEqual(
      card.card.items.map((i) => i.label),
      ["Python", "Go", "Rust", OTHER_LABEL],
    );
    assert.equal(card.card.items[0].description, "the server");
    assert.equal(card.ctx.title(), "Stack");
    assert.equal(card.ctx.canTakeTime, false);
    choose(card, ["Python", "Rust", OTHER_LABEL]);
    const other = await server.ui.nextCard();
    assert.equal(other.kind, "input");
    type(other, "Zig");
    const result = await finishedTool(server, "call-multi");
    assert.equal(result.status, "completed");
    assert.deepEqual(JSON.parse(toolResultText(result)), {
      answers: [{ id: "langs", selected: ["Python", "Rust"], custom: "Zig" }],
    });
    assert.equal((await prompt).stopReason, "end_turn");
    // V5: a blocking ask has no wait, so nothing is claimed.
    assert.equal(server.peer.requests(Methods.attachWait).length, 0);
  });

  test("V4: single-select Other replaces the choice; a question without options takes text; titles count the batch", async () => {
    const prompt = server.sessions.prompt("set up");
    const db = await server.ui.nextCard();
    assert.equal(db.kind === "pick" && db.card.canPickMany, false);
    assert.equal(db.kind !== "confirm" && db.ctx.title(), "Setup (1/2)");
    choose(db, [OTHER_LABEL]);
    type(await server.ui.nextCard(), "Postgres");
    const name = await server.ui.nextCard();
    assert.equal(name.kind, "input");
    assert.equal(name.kind === "input" && name.ctx.title(), "askbridge (2/2)");
    type(name, "demo");
    const result = await finishedTool(server, "call-two");
    assert.deepEqual(JSON.parse(toolResultText(result)), {
      answers: [
        { id: "db", selected: [], custom: "Postgres" },
        { id: "name", selected: [], custom: "demo" },
      ],
    });
    await prompt;
  });

  test("ASK_CANCELLED (E2): dismissing a card fails the tool call with ASK_CANCELLED", async () => {
    const prompt = server.sessions.prompt("dismiss");
    const card = await server.ui.nextCard();
    card.resolve(undefined);
    const result = await finishedTool(server, "call-dismiss");
    assert.equal(result.status, "failed");
    assert.deepEqual(result.error, { name: "UserQuestionError", code: "ASK_CANCELLED" });
    assert.equal(toolResultText(result), "Error: the user cancelled ask_user_question");
    await prompt;
  });
});

describe("timed waits (claims, countdown, late replies)", () => {
  let server: ServerUnderTest;
  before(async () => {
    server = await startServer(
      [
        askStep("call-timeout", [DB]),
        { text: "I will wait for the database choice" },
        { text: "thanks, got the late answer" },
        askStep("call-take-time", [LANGS]),
        { text: "noted" },
        askStep("call-abort", [DB]),
      ],
      { askMode: "timed", askTimeout: 600 },
    );
  });
  after(() => server.stop());

  test("C3/TW7: the claim's frame starts the countdown; at zero the card closes and the tool returns pending", async () => {
    const prompt = server.sessions.prompt("timed");
    const card = await server.ui.nextCard();
    if (card.kind !== "pick") throw new Error("expected a pick card");
    // The one $/progress frame of the claim starts the countdown (600 s on the server).
    const title = await waitFor("countdown in the title", () => /s left$/.test(card.ctx.title()) && card.ctx.title());
    const seconds = Number(/ · (\d+)s left$/.exec(title)![1]);
    assert.ok(seconds > 590 && seconds <= 600, title);
    assert.equal(card.ctx.canTakeTime, true);
    const claim = server.peer.requests(Methods.attachWait)[0];
    assert.equal(claim.params.callId, "call-timeout");
    assert.equal(claim.settled, "open", "the claim is held while the card is open (C3)");
    server.timers.advance(seconds * 1000);
    assert.equal(card.closed, true, "the card closes when its countdown reaches zero");
    const result = await finishedTool(server, "call-timeout");
    assert.equal(result.status, "completed");
    const pending = JSON.parse(toolResultText(result));
    assert.equal(pending.pending, true);
    assert.equal(pending.callId, "call-timeout");
    await prompt;
    // C4: the claim was released with $/cancelRequest when the card ended.
    await waitFor("claim released", () => claim.settled !== "open");
    assert.equal(claim.cancelledByClient, true);
  });

  test("V7/L4/L6: a continued question is listed, answered late, queued as a user message and then settled", async () => {
    const entry = await waitFor("continued entry", () =>
      server.continued.entries().find((e) => e.callId === "call-timeout"),
    );
    assert.equal(entry.label, "Setup: Which database?");
    const outcome = server.continued.answer(entry, server.ui, new CancellationTokenSource().token);
    const card = await server.ui.nextCard();
    assert.equal(card.kind !== "confirm" && card.ctx.title(), "Setup");
    assert.equal(card.kind !== "confirm" && card.ctx.canTakeTime, false, "a late reply has no countdown");
    choose(card, ["MySQL"]);
    assert.equal(await outcome, "accepted");
    const message = await waitFor("admitted late reply", () =>
      server.updatesOf("user_message").find((u) => u.source?.callId === "call-timeout"),
    );
    assert.equal(message.source.kind, "user-question-reply");
    const body = JSON.parse(message.content[0].text);
    assert.equal(body.kind, "answer_to_pending_question");
    assert.deepEqual(body.answers, [{ id: "db", selected: ["MySQL"] }]);
    await waitFor("settled", () => !server.continued.entries().some((e) => e.callId === "call-timeout"));
    // L6: once settled, another reply is not accepted.
    assert.equal(
      await server.continued.send(entry.sessionId, "call-timeout", { answers: [{ id: "db", selected: ["SQLite"] }] }),
      "rejected",
    );
  });

  test("TW5: Take time stops the countdown but keeps the claim; the user's answer still arrives", async () => {
    const prompt = server.sessions.prompt("take your time");
    const card = await server.ui.nextCard();
    if (card.kind !== "pick") throw new Error("expected a pick card");
    await waitFor("countdown", () => card.ctx.canTakeTime);
    card.ctx.takeTime();
    assert.equal(card.ctx.title(), "Stack · take your time");
    assert.equal(card.ctx.canTakeTime, false);
    server.timers.advance(3_600_000);
    assert.equal(card.closed, false, "a paused countdown never expires");
    const claim = server.peer.requests(Methods.attachWait).find((r) => r.params.callId === "call-take-time")!;
    assert.equal(claim.settled, "open");
    choose(card, ["Go"]);
    const result = await finishedTool(server, "call-take-time");
    assert.deepEqual(JSON.parse(toolResultText(result)), { answers: [{ id: "langs", selected: ["Go"] }] });
    await prompt;
    await waitFor("claim released", () => claim.settled !== "open");
  });

  test("A9: session/cancel closes the open card (server $/cancelRequest), the user is told, the tool fails with ASK_ABORTED", async () => {
    const prompt = server.sessions.prompt("abort");
    const card = await server.ui.nextCard();
    assert.equal(server.withdrawn.length, 0);
    await server.sessions.cancel();
    await waitFor("card closed by the server", () => card.closed);
    assert.deepEqual(
      server.withdrawn.map((ask) => ask.wait?.callId),
      ["call-abort"],
      "the card on screen was withdrawn: the extension tells the user",
    );
    assert.deepEqual(await waitFor("the notice", () => server.notices.length > 0 && server.notices), [
      'askbridge: "Setup: Which database?" was closed: the agent no longer needs this answer (the turn was cancelled, or the question was dismissed in another window).',
    ]);
    const result = await finishedTool(server, "call-abort");
    assert.equal(result.status, "failed");
    assert.equal(result.error?.code, "ASK_ABORTED");
    assert.equal((await prompt).stopReason, "cancelled");
  });
});

describe("shutdown", () => {
  test("Lifecycle: after shutdown the server cancels the outstanding ask and the card closes", async () => {
    const server = await startServer([askStep("call-open", [DB])]);
    try {
      void server.sessions.prompt("ask and shut down").catch(() => undefined);
      const card = await server.ui.nextCard();
      assert.equal(card.closed, false);
      await server.connection.sendRequest("shutdown");
      await waitFor("card closed after shutdown", () => card.closed);
    } finally {
      await server.stop();
    }
  });
});

describe("two sessions asking at once", () => {
  let server: ServerUnderTest;
  before(async () => {
    server = await startServer([askStep("call-q", [DB]), { text: "ok" }]);
  });
  after(() => server.stop());

  async function promptIn(sessionId: string): Promise<{ stopReason: string }> {
    return server.connection.sendRequest(Methods.sessionPrompt, { sessionId, prompt: [{ type: "text", text: "go" }] });
  }

  function resultIn(sessionId: string): Record<string, any> | undefined {
    return server.updates.find(
      (u) =>
        u.sessionId === sessionId && u.update.sessionUpdate === "tool_call_update" && u.update.status !== "in_progress",
    )?.update;
  }

  test("V4/A9: a second ask waits until the first card is done; a queued ask cancelled by the server never shows", async () => {
    const [a, b, c] = [
      await server.sessions.newSession(),
      await server.sessions.newSession(),
      await server.sessions.newSession(),
    ];
    const promptA = promptIn(a);
    const first = await server.ui.nextCard();
    const promptB = promptIn(b);
    const promptC = promptIn(c);
    await waitFor("two asks waiting in line", () => server.queue.queued === 2);
    assert.equal(server.ui.shown.length, 1, "only one card on screen");
    // The server cancels C's ask while it waits in line (A9): it leaves without showing.
    await server.connection.sendNotification(Methods.sessionCancel, { sessionId: c });
    assert.equal((await promptC).stopReason, "cancelled");
    assert.equal(resultIn(c)?.error?.code, "ASK_ABORTED");
    await waitFor("C left the line", () => server.queue.queued === 1);
    assert.deepEqual(server.withdrawn, [], "an ask withdrawn while waiting in line was never seen: nothing to tell");
    choose(first, ["SQLite"]);
    const second = await server.ui.nextCard();
    choose(second, ["MySQL"]);
    await Promise.all([promptA, promptB]);
    assert.equal(server.ui.shown.length, 2);
    assert.deepEqual(JSON.parse(toolResultText(resultIn(a)!)), { answers: [{ id: "db", selected: ["SQLite"] }] });
    assert.deepEqual(JSON.parse(toolResultText(resultIn(b)!)), { answers: [{ id: "db", selected: ["MySQL"] }] });
  });
});
