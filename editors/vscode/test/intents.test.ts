/**
 * Intents (behavior.md V3) and the reply shapes of protocol.md, checked on the
 * handler directly: a script model cannot produce intents or detail (T2: they
 * come from programmatic callers of the service), so the server cannot send
 * these asks over the wire in a test.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { CancellationToken, CancellationTokenSource, Disposable, ProgressType, ResponseError } from "vscode-jsonrpc";

import { AskParams, QuestionItem } from "../src/protocol";
import { QuestionHandler, RpcPeer, approvalCard } from "../src/questions";
import { ManualTimers, ScriptedUi, choose } from "./harness";

/** Asks without a wait send nothing to the server; any request here is a bug. */
class SilentPeer implements RpcPeer {
  readonly sent: string[] = [];
  sendRequest<R>(method: string): Promise<R> {
    this.sent.push(method);
    return Promise.reject(new Error(`unexpected request ${method}`));
  }
  sendNotification(method: string): Promise<void> {
    this.sent.push(method);
    return Promise.reject(new Error(`unexpected notification ${method}`));
  }
  onProgress<P>(_type: ProgressType<P>, _token: string | number, _handler: (value: P) => void): Disposable {
    return Disposable.create(() => undefined);
  }
}

const APPROVAL: QuestionItem = {
  id: "run",
  question: "Run the migration?",
  detail: "ALTER TABLE users ADD COLUMN age INT",
  options: [{ label: "Run it" }, { label: "Don't" }, { label: "Always run migrations" }],
  intent: {
    kind: "approval",
    approve: "Run it",
    reject: "Don't",
    always: "Always run migrations",
    subject: { name: "db-tool" },
    display: { fr: { question: "Lancer la migration ?", approve: "Lancer" } },
  },
};

function ask(questions: QuestionItem[]): AskParams {
  return { sessionId: "s-1", agentId: "a-1", questions };
}

describe("intents", () => {
  test("V3 approval: a modal with approve, reject and always; the chosen label is the answer", async () => {
    const ui = new ScriptedUi();
    const peer = new SilentPeer();
    const handler = new QuestionHandler(peer, ui, { timers: new ManualTimers() });
    const reply = handler.handleAsk(ask([APPROVAL]), CancellationToken.None);
    const card = await ui.nextCard();
    if (card.kind !== "confirm") throw new Error(`expected a modal, got ${card.kind}`);
    assert.equal(card.card.message, "db-tool: Run the migration?");
    assert.equal(card.card.detail, "ALTER TABLE users ADD COLUMN age INT");
    assert.deepEqual(
      card.card.buttons.map((b) => b.label),
      ["Run it", "Don't", "Always run migrations"],
    );
    card.resolve("Always run migrations");
    assert.deepEqual(await reply, { answers: [{ id: "run", selected: ["Always run migrations"] }] });
    assert.deepEqual(peer.sent, []);
  });

  test("V3 approval display: the UI locale's strings are shown, the option label is still answered", () => {
    const card = approvalCard(APPROVAL, APPROVAL.intent as never, "fr-ca");
    assert.equal(card.message, "db-tool: Lancer la migration ?");
    assert.deepEqual(card.buttons[0], { text: "Lancer", label: "Run it" });
    assert.equal(card.detail, APPROVAL.detail, "no localized detail: the original is kept");
    assert.equal(approvalCard(APPROVAL, APPROVAL.intent as never, "de").message, "db-tool: Run the migration?");
  });

  test("ASK_CANCELLED: a dismissed approval modal replies the UserQuestionError data of protocol.md", async () => {
    const ui = new ScriptedUi();
    const handler = new QuestionHandler(new SilentPeer(), ui, { timers: new ManualTimers() });
    const reply = handler.handleAsk(ask([APPROVAL]), CancellationToken.None);
    (await ui.nextCard()).resolve(undefined);
    const error = await reply;
    assert.ok(error instanceof ResponseError);
    assert.equal(error.code, -32000);
    assert.deepEqual(error.data, { name: "UserQuestionError", code: "ASK_CANCELLED" });
    assert.equal(error.message, "the user cancelled ask_user_question");
  });

  test("V3 plan-review: the plan is shown as a document before the pick card", async () => {
    const ui = new ScriptedUi();
    const handler = new QuestionHandler(new SilentPeer(), ui, { timers: new ManualTimers() });
    const plan: QuestionItem = {
      id: "plan",
      header: "Plan",
      question: "Go ahead with this plan?",
      detail: "# Plan\n1. add table\n2. backfill",
      options: [{ label: "Approve" }, { label: "Revise" }],
      intent: { kind: "plan-review", approve: "Approve" },
    };
    const reply = handler.handleAsk(ask([plan]), CancellationToken.None);
    const card = await ui.nextCard();
    assert.deepEqual(ui.documents, [{ title: "Plan", markdown: "# Plan\n1. add table\n2. backfill" }]);
    assert.equal(card.kind === "pick" && card.card.detail, plan.detail);
    choose(card, ["Approve"]);
    assert.deepEqual(await reply, { answers: [{ id: "plan", selected: ["Approve"] }] });
  });

  test("A9: a request already cancelled by the server replies -32800 and shows nothing", async () => {
    const ui = new ScriptedUi();
    const handler = new QuestionHandler(new SilentPeer(), ui, { timers: new ManualTimers() });
    const source = new CancellationTokenSource();
    source.cancel();
    const error = await handler.handleAsk(ask([{ id: "q", question: "?" }]), source.token);
    assert.ok(error instanceof ResponseError);
    assert.equal(error.code, -32800);
    assert.equal(ui.shown.length, 0);
  });

  test("V4: an Other text box abandoned with Esc returns to the list with the choices kept", async () => {
    const ui = new ScriptedUi();
    const handler = new QuestionHandler(new SilentPeer(), ui, { timers: new ManualTimers() });
    const q: QuestionItem = {
      id: "tags",
      question: "Tags?",
      options: [{ label: "a" }, { label: "b" }],
      multiSelect: true,
    };
    const reply = handler.handleAsk(ask([q]), CancellationToken.None);
    choose(await ui.nextCard(), ["b", "Other…"]);
    (await ui.nextCard()).resolve(undefined); // Esc in the text box
    const again = await ui.nextCard();
    assert.equal(again.kind, "pick");
    assert.deepEqual(again.kind === "pick" && again.card.items.filter((i) => i.picked).map((i) => i.label), ["b"]);
    choose(again, ["b"]);
    assert.deepEqual(await reply, { answers: [{ id: "tags", selected: ["b"] }] });
  });
});
