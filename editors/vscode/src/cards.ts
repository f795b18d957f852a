/**
 * The card flow shared by live asks (questions.ts) and late replies
 * (continued.ts): each question of a batch in turn, as a pick list with an
 * "Other…" entry (free text) or a text box when it has no options. A
 * `plan-review` question (V3) is the plan rendered as a document beside a pick
 * list of its options, the `approve` one first, and "Give feedback…" (free
 * text, sent as `custom`) instead of "Other…"; the document closes with the
 * card. The result is the Answer of behavior.md V4, or undefined as soon as
 * one card is dismissed or closed. No `vscode` import.
 */
import { CancellationToken, Disposable } from "vscode-jsonrpc";

import { Answer, AnswerItem, Option, PlanReviewIntent, QuestionItem } from "./protocol";
import { CardContext, DocumentCard, PickItem, QuestionUi } from "./ui";

export const OTHER_LABEL = "Other…";
export const FEEDBACK_LABEL = "Give feedback…";

/**
 * One card session on screen at a time. VS Code shows a single QuickPick: a
 * second one would hide the first, which reads as "dismissed". Asks and late
 * replies therefore wait their turn here, first come first served; one whose
 * token is cancelled while it waits leaves the line without showing anything.
 */
export class CardQueue {
  private tail: Promise<void> = Promise.resolve();
  private waiting = 0;

  /** How many card sessions are waiting for their turn. */
  get queued(): number {
    return this.waiting;
  }

  /** Run `show` once every earlier session ended; undefined if `token` is cancelled first. */
  async exclusive<T>(token: CancellationToken, show: () => Promise<T>): Promise<T | undefined> {
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const previous = this.tail;
    this.tail = previous.then(() => mine);
    this.waiting++;
    let subscription: Disposable | undefined;
    try {
      const cancelled = new Promise<boolean>((resolve) => {
        subscription = token.onCancellationRequested(() => resolve(true));
      });
      const gaveUp = token.isCancellationRequested || (await Promise.race([previous.then(() => false), cancelled]));
      subscription?.dispose();
      this.waiting--;
      if (gaveUp) return undefined;
      return await show();
    } finally {
      release();
    }
  }
}

/**
 * Ask each question in turn; undefined as soon as one card is dismissed or
 * closed. Shared by live asks and late replies to continued questions.
 */
export async function collectAnswer(
  questions: QuestionItem[],
  ui: QuestionUi,
  card: CardContextSource,
): Promise<Answer | undefined> {
  const answers: AnswerItem[] = [];
  for (const [index, question] of questions.entries()) {
    if (card.token.isCancellationRequested) return undefined;
    const ctx = card.contextFor(question, index, questions.length);
    const item = await askOne(question, ui, ctx);
    if (item === undefined) return undefined;
    answers.push(item);
  }
  return { answers };
}

async function askOne(question: QuestionItem, ui: QuestionUi, ctx: CardContext): Promise<AnswerItem | undefined> {
  const plan = planReview(question);
  const shown = plan ? await ui.showDocument(plan.document) : undefined;
  try {
    return await askWithOptions(question, plan, ui, ctx);
  } finally {
    shown?.dispose();
  }
}

interface PlanCard {
  document: DocumentCard;
  approve: string;
}

function planReview(question: QuestionItem): PlanCard | undefined {
  if (question.intent?.kind !== "plan-review" || !question.detail) return undefined;
  const document = { title: question.header || "Plan", heading: question.question, markdown: question.detail };
  return { document, approve: (question.intent as PlanReviewIntent).approve };
}

/** A plan's options with the approve one first; any other question's as given. */
function orderedOptions(question: QuestionItem, plan: PlanCard | undefined): Option[] {
  const options = question.options ?? [];
  if (!plan) return options;
  return [...options.filter((o) => o.label === plan.approve), ...options.filter((o) => o.label !== plan.approve)];
}

async function askWithOptions(
  question: QuestionItem,
  plan: PlanCard | undefined,
  ui: QuestionUi,
  ctx: CardContext,
): Promise<AnswerItem | undefined> {
  const base = {
    questionId: question.id,
    question: question.question,
    header: question.header ?? undefined,
    detail: question.detail ?? undefined,
  };
  const options = orderedOptions(question, plan);
  if (options.length === 0) {
    const text = await ui.input({ ...base, prompt: question.question }, ctx);
    if (text === undefined) return undefined;
    return text === "" ? { id: question.id, selected: [] } : { id: question.id, selected: [], custom: text };
  }
  const multi = Boolean(question.multiSelect);
  let checked = new Set<string>();
  for (;;) {
    const items: PickItem[] = options.map((o) => ({
      label: o.label,
      description: o.description ?? undefined,
      picked: checked.has(o.label),
    }));
    items.push(
      plan
        ? { label: FEEDBACK_LABEL, description: "keep planning, with your notes for the agent", isOther: true }
        : { label: OTHER_LABEL, description: "type your own answer", isOther: true },
    );
    const picked = await ui.pick({ ...base, document: plan?.document, items, canPickMany: multi }, ctx);
    if (picked === undefined || ctx.token.isCancellationRequested) return undefined;
    const labels = picked.filter((p) => !p.isOther).map((p) => p.label);
    if (!picked.some((p) => p.isOther)) {
      return { id: question.id, selected: multi ? labels : labels.slice(0, 1) };
    }
    const prompt = plan
      ? "Your feedback on the plan (the agent keeps planning)"
      : `${question.question} (your own answer)`;
    const text = await ui.input({ ...base, prompt }, ctx);
    if (ctx.token.isCancellationRequested) return undefined;
    if (text !== undefined) {
      // V4: single-select custom replaces the choice; multi-select custom accompanies it.
      if (text === "") return { id: question.id, selected: multi ? labels : [] };
      return { id: question.id, selected: multi ? labels : [], custom: text };
    }
    checked = new Set(labels); // Esc in the text box: back to the list, choices kept
  }
}

/** Builds the per-question card contexts of one card session. */
export interface CardContextSource {
  readonly token: CancellationToken;
  contextFor(question: QuestionItem, index: number, count: number): CardContext;
}

/** A card session without a wait: a late reply to a continued question (no countdown). */
export class PlainCards implements CardContextSource {
  constructor(readonly token: CancellationToken) {}

  contextFor(question: QuestionItem, index: number, count: number): CardContext {
    const title = baseTitle(question, index, count);
    return {
      token: this.token,
      title: () => title,
      onDidChange: () => Disposable.create(() => undefined),
      canTakeTime: false,
      takeTime: () => undefined,
    };
  }
}

export function baseTitle(question: QuestionItem, index: number, count: number): string {
  const head = question.header || "askbridge";
  return count > 1 ? `${head} (${index + 1}/${count})` : head;
}
