/**
 * Continued questions: timed questions whose tool call already returned
 * pending and that the user can still answer late (behavior.md L1–L6, V7).
 *
 * `userQuestions/didChange` notifications feed `update`; `entries()` lists
 * every `continued` question of every session, for the status bar item and the
 * tree view; `answer` shows the question's cards (no countdown: nothing is
 * waiting) and sends `userQuestions/answer`. No `vscode` import.
 */
import { CancellationToken, Disposable } from "vscode-jsonrpc";

import { Answer, DidChangeParams, domainErrorCode, Methods, ProjectionView, QuestionItem } from "./protocol";
import { CardQueue, PlainCards, RpcPeer, collectAnswer } from "./questions";
import { QuestionUi } from "./ui";

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
 * dismissed: the user closed the cards.
 */
export type LateAnswerOutcome = "accepted" | "rejected" | "queued" | "dismissed";

export class ContinuedQuestions {
  private readonly views = new Map<string, ProjectionView>();
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly peer: RpcPeer,
    /** Shared with the QuestionHandler: a late reply's cards wait for a live ask's and vice versa. */
    private readonly queue: CardQueue = new CardQueue(),
  ) {}

  /** Apply a `userQuestions/didChange` notification. */
  update(params: DidChangeParams): void {
    if (!params?.sessionId || !params.view) return;
    this.views.set(params.sessionId, params.view);
    for (const listener of [...this.listeners]) listener();
  }

  onDidChange(listener: () => void): Disposable {
    this.listeners.add(listener);
    return Disposable.create(() => this.listeners.delete(listener));
  }

  /** Forget everything (the server restarted: it will resend views on session/load). */
  clear(): void {
    this.views.clear();
    for (const listener of [...this.listeners]) listener();
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
          label: entryLabel(active.questions),
        });
      }
    }
    return out;
  }

  /** Show the entry's questions and send the reply; the outcome says what the server did with it. */
  async answer(entry: ContinuedEntry, ui: QuestionUi, token: CancellationToken): Promise<LateAnswerOutcome> {
    const answer = await this.queue.exclusive(token, () => collectAnswer(entry.questions, ui, new PlainCards(token)));
    if (answer === undefined) return "dismissed";
    return this.send(entry.sessionId, entry.callId, answer);
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

function entryLabel(questions: QuestionItem[]): string {
  const first = questions[0];
  if (!first) return "(no question)";
  const text = first.header ? `${first.header}: ${first.question}` : first.question;
  return questions.length > 1 ? `${text} (+${questions.length - 1} more)` : text;
}
