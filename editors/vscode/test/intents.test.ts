/**
 * Intents (behavior.md V3) and the reply shapes of protocol.md, checked on the
 * handler directly: a script model cannot produce intents or detail (T2: they
 * come from programmatic callers of the service, such as `askbridge mcp`'s
 * approval_prompt, X5), so the server cannot send these asks in a test yet.
 * An approval card is its subject and question, the rendered command beside
 * it and only the approve/reject/always labels; a plan-review card is the
 * rendered plan beside Approve / the other options / "Give feedback…".
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { CancellationToken, CancellationTokenSource, Disposable, ProgressType, ResponseError } from "vscode-jsonrpc";

import { AskParams, QuestionItem } from "../src/protocol";
import { FEEDBACK_LABEL, QuestionHandler, RpcPeer, approvalCard } from "../src/questions";
import { ManualTimers, ScriptedUi, ShownCard, choose, type } from "./harness";

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

function handlerWith(ui: ScriptedUi, withdrawn: AskParams[] = []): QuestionHandler {
  return new QuestionHandler(new SilentPeer(), ui, {
    timers: new ManualTimers(),
    onWithdrawn: (params) => withdrawn.push(params),
  });
}

/** What `askbridge mcp`'s approval_prompt asks for a Bash call (X5). */
const BASH_APPROVAL: QuestionItem = {
  id: "approval",
  question: "Allow Bash?",
  detail: "```bash\nrm -rf build\n```",
  options: [{ label: "Allow" }, { label: "Deny" }],
  intent: { kind: "approval", approve: "Allow", reject: "Deny", subject: { name: "Bash" } },
};

/** What approval_prompt asks for ExitPlanMode (X5): the plan, Approve plan / Keep planning, feedback. */
const PLAN: QuestionItem = {
  id: "plan",
  header: "Plan",
  question: "Go ahead with this plan?",
  detail: "# Plan\n1. add table\n2. backfill",
  options: [{ label: "Keep planning" }, { label: "Approve plan", description: "start now" }],
  intent: { kind: "plan-review", approve: "Approve plan" },
};

describe("approval cards (V3 approval)", () => {
  test("subject, the rendered command beside it, and only approve/reject/always; the chosen label is the answer", async () => {
    const ui = new ScriptedUi();
    const peer = new SilentPeer();
    const handler = new QuestionHandler(peer, ui, { timers: new ManualTimers() });
    const reply = handler.handleAsk(ask([APPROVAL]), CancellationToken.None);
    const card = await ui.nextCard();
    if (card.kind !== "confirm") throw new Error(`expected an approval card, got ${card.kind}`);
    assert.equal(card.card.title, "db-tool");
    assert.equal(card.card.message, "Run the migration?");
    assert.deepEqual(
      card.card.buttons.map((b) => b.label),
      ["Run it", "Don't", "Always run migrations"],
      "nothing else: no Other…, no free text",
    );
    assert.deepEqual(ui.documents, [
      {
        title: "db-tool",
        heading: "db-tool: Run the migration?",
        markdown: "ALTER TABLE users ADD COLUMN age INT",
        closed: false,
      },
    ]);
    card.resolve("Always run migrations");
    assert.deepEqual(await reply, { answers: [{ id: "run", selected: ["Always run migrations"] }] });
    assert.equal(ui.documents[0].closed, true, "the command closes with its card");
    assert.deepEqual(peer.sent, []);
  });

  test("X5 shape: a Bash approval without always is Allow / Deny with the shell block rendered", async () => {
    const ui = new ScriptedUi();
    const reply = handlerWith(ui).handleAsk(ask([BASH_APPROVAL]), CancellationToken.None);
    const card = await ui.nextCard();
    if (card.kind !== "confirm") throw new Error(`expected an approval card, got ${card.kind}`);
    assert.deepEqual(
      card.card.buttons.map((b) => [b.text, b.label]),
      [
        ["Allow", "Allow"],
        ["Deny", "Deny"],
      ],
    );
    assert.equal(ui.documents[0].markdown, "```bash\nrm -rf build\n```");
    card.resolve("Deny");
    assert.deepEqual(await reply, { answers: [{ id: "approval", selected: ["Deny"] }] });
  });

  test("V3 approval display: the UI locale's strings are shown, the option label is still answered", () => {
    const card = approvalCard(APPROVAL, APPROVAL.intent as never, "fr-ca");
    assert.equal(card.message, "Lancer la migration ?");
    assert.equal(card.document?.heading, "db-tool: Lancer la migration ?");
    assert.deepEqual(card.buttons[0], { text: "Lancer", label: "Run it" });
    assert.equal(card.document?.markdown, APPROVAL.detail, "no localized detail: the original is kept");
    assert.equal(approvalCard(APPROVAL, APPROVAL.intent as never, "de").message, "Run the migration?");
    const intent = { kind: "approval", approve: "Allow", reject: "Deny" } as const;
    assert.equal(approvalCard({ ...BASH_APPROVAL, header: "Shell", intent }, intent, "en").title, "Shell");
    assert.equal(approvalCard({ ...BASH_APPROVAL, intent }, intent, "en").title, "askbridge approval");
  });

  test("ASK_CANCELLED: a dismissed approval card replies the UserQuestionError data of protocol.md", async () => {
    const ui = new ScriptedUi();
    const reply = handlerWith(ui).handleAsk(ask([APPROVAL]), CancellationToken.None);
    (await ui.nextCard()).resolve(undefined);
    const error = await reply;
    assert.ok(error instanceof ResponseError);
    assert.equal(error.code, -32000);
    assert.deepEqual(error.data, { name: "UserQuestionError", code: "ASK_CANCELLED" });
    assert.equal(error.message, "the user cancelled ask_user_question");
    assert.equal(ui.documents[0].closed, true);
  });

  test("A9/M2: an approval the server withdraws (answered in another window) closes with its command, and says so", async () => {
    const ui = new ScriptedUi();
    const withdrawn: AskParams[] = [];
    const source = new CancellationTokenSource();
    const reply = handlerWith(ui, withdrawn).handleAsk(ask([BASH_APPROVAL]), source.token);
    const card = await ui.nextCard();
    source.cancel(); // the server's $/cancelRequest
    const error = await reply;
    assert.ok(error instanceof ResponseError);
    assert.equal(error.code, -32800);
    assert.equal(card.closed, true, "unlike a modal dialog, the card closes");
    assert.equal(ui.documents[0].closed, true);
    assert.deepEqual(withdrawn, [ask([BASH_APPROVAL])]);
  });
});

describe("plan-review cards (V3 plan-review)", () => {
  async function planCard(ui: ScriptedUi): Promise<{ card: ShownCard; reply: Promise<unknown> }> {
    const reply = handlerWith(ui).handleAsk(ask([PLAN]), CancellationToken.None);
    return { card: await ui.nextCard(), reply };
  }

  test("the plan is rendered beside Approve (first) / Keep planning / Give feedback…", async () => {
    const ui = new ScriptedUi();
    const { card, reply } = await planCard(ui);
    assert.deepEqual(ui.documents, [
      { title: "Plan", heading: "Go ahead with this plan?", markdown: PLAN.detail, closed: false },
    ]);
    if (card.kind !== "pick") throw new Error(`expected a pick card, got ${card.kind}`);
    assert.deepEqual(
      card.card.items.map((i) => [i.label, i.description]),
      [
        ["Approve plan", "start now"],
        ["Keep planning", undefined],
        [FEEDBACK_LABEL, "keep planning, with your notes for the agent"],
      ],
    );
    assert.deepEqual(
      card.card.document,
      { title: "Plan", heading: "Go ahead with this plan?", markdown: PLAN.detail },
      "the card knows its plan is beside it: the placeholder does not repeat it",
    );
    choose(card, ["Approve plan"]);
    assert.deepEqual(await reply, { answers: [{ id: "plan", selected: ["Approve plan"] }] });
    assert.equal(ui.documents[0].closed, true, "the plan closes with its card");
  });

  test("V4: feedback is free text sent as custom (the choice is replaced); Keep planning is an option", async () => {
    const ui = new ScriptedUi();
    const first = await planCard(ui);
    choose(first.card, [FEEDBACK_LABEL]);
    const box = await ui.nextCard();
    assert.equal(box.kind === "input" && box.card.prompt, "Your feedback on the plan (the agent keeps planning)");
    type(box, "split step 2 into two migrations");
    assert.deepEqual(await first.reply, {
      answers: [{ id: "plan", selected: [], custom: "split step 2 into two migrations" }],
    });
    const second = await planCard(ui);
    choose(second.card, ["Keep planning"]);
    assert.deepEqual(await second.reply, { answers: [{ id: "plan", selected: ["Keep planning"] }] });
  });
});

describe("cards", () => {
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
