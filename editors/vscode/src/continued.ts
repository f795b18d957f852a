/**
 * Continued questions: timed questions whose tool call already returned
 * pending and that the user can still answer late (behavior.md L1–L6, V7).
 *
 * `userQuestions/didChange` notifications feed `update`, which folds their
 * changes into a per-session copy of the view (views.ts, S2); `entries()` lists
 * every `continued` question of every session the window follows, for the
 * status bar item and the tree view; `answer` shows the question's cards (no
 * countdown: nothing is waiting) and sends `userQuestions/answer`. When the
 * entry stops being `continued` while its cards are open (another window
 * answered it, M5), the cards close and the outcome is `withdrawn`.
 * No `vscode` import.
 */
import { CancellationToken, CancellationTokenSource, Disposable } from "vscode-jsonrpc";

import { Answer, DidChangeParams, domainErrorCode, Methods, ProjectionView, QuestionItem } from "./protocol";
import { CardQueue, PlainCards, RpcPeer, collectAnswer } from "./questions";
import { QuestionUi } from "./ui";
import { emptyView, foldViewChanges } from "./views";

export interface ContinuedEntry {
  sessionId: string;
  callId: string;
  questions: QuestionItem[];
  /** A one-line label: the first question's header and text, and how many more. */
  label: string;
}

/**
 * accepted: queued in the agent's inbox (L4); rejected: no longer answerable
 * (L1: open, settled or unknown); queued: a reply is already waiting (L2);
 * dismissed: the user closed the cards; withdrawn: the question stopped
 * waiting while its cards were open (answered elsewhere), so they closed.
 */
export type LateAnswerOutcome = "accepted" | "rejected" | "queued" | "dismissed" | "withdrawn";

export class ContinuedQuestions {
  private readonly views = new Map<string, ProjectionView>();
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly peer: RpcPeer,
    /** Shared with the QuestionHandler: a late reply's cards wait for a live ask's and vice versa. */
    private readonly queue: CardQueue = new CardQueue(),
  ) {}

  /** Fold a `userQuestions/didChange` notification into that session's view. */
  update(params: DidChangeParams): void {
    if (typeof params?.sessionId !== "string" || !Array.isArray(params.changes)) return;
    let view = this.views.get(params.sessionId);
    if (!view) this.views.set(params.sessionId, (view = emptyView()));
    foldViewChanges(view, params.changes);
    this.changed();
  }

  /** Drop one session's view: before a `session/load`, whose first didChange is a fresh snapshot. */
  forgetSession(sessionId: string): void {
    if (this.views.delete(sessionId)) this.changed();
  }

  /** The session's view as this client folded it (undefined: not followed). */
  view(sessionId: string): ProjectionView | undefined {
    return this.views.get(sessionId);
  }

  onDidChange(listener: () => void): Disposable {
    this.listeners.add(listener);
    return Disposable.create(() => this.listeners.delete(listener));
  }

  /** Forget everything (the server restarted: it will resend views on session/load). */
  clear(): void {
    this.views.clear();
    this.changed();
  }

  entries(): ContinuedEntry[] {
    const out: ContinuedEntry[] = [];
    for (const [sessionId, view] of this.views) {
      for (const active of view.active ?? []) {
        if (active.state !== "continued") continue;
        out.push({
          sessionId,
          callId: active.callId,
          questions: active.questions,
          label: questionsLabel(active.questions),
        });
      }
    }
    return out;
  }

  /** Show the entry's questions and send the reply; the outcome says what the server did with it. */
  async answer(entry: ContinuedEntry, ui: QuestionUi, token: CancellationToken): Promise<LateAnswerOutcome> {
    const closing = new CancellationTokenSource();
    const withdrawn = () => !this.isContinued(entry.sessionId, entry.callId);
    const watch = [
      token.onCancellationRequested(() => closing.cancel()),
      this.onDidChange(() => withdrawn() && closing.cancel()),
    ];
    try {
      if (withdrawn()) return "withdrawn";
      const answer = await this.queue.exclusive(closing.token, () =>
        collectAnswer(entry.questions, ui, new PlainCards(closing.token)),
      );
      if (answer === undefined) return withdrawn() && !token.isCancellationRequested ? "withdrawn" : "dismissed";
      return await this.send(entry.sessionId, entry.callId, answer);
    } finally {
      for (const d of watch) d.dispose();
      closing.dispose();
    }
  }

  private isContinued(sessionId: string, callId: string): boolean {
    const active = this.views.get(sessionId)?.active ?? [];
    return active.some((entry) => entry.callId === callId && entry.state === "continued");
  }

  private changed(): void {
    for (const listener of [...this.listeners]) listener();
  }

  /** `userQuestions/answer`: true → accepted, false → rejected, REPLY_QUEUED → queued; other errors throw. */
  async send(sessionId: string, callId: string, answer: Answer): Promise<LateAnswerOutcome> {
    try {
      const accepted = await this.peer.sendRequest<boolean>(Methods.answer, { sessionId, callId, answer });
      return accepted ? "accepted" : "rejected";
    } catch (error) {
      if (domainErrorCode(error) === "REPLY_QUEUED") return "queued";
      throw error;
    }
  }
}

/** A one-line label for a batch: the first question's header and text, and how many more. */
export function questionsLabel(questions: QuestionItem[]): string {
  const first = questions[0];
  if (!first) return "(no question)";
  const text = first.header ? `${first.header}: ${first.question}` : first.question;
  return questions.length > 1 ? `${text} (+${questions.length - 1} more)` : text;
}
