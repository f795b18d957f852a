/**
 * Answering `userQuestions/ask` (protocol.md "Questions: server → client"),
 * independent of VS Code: the extension passes its LanguageClient as the
 * `RpcPeer` and a QuickPick-based `QuestionUi`; the node tests pass a
 * vscode-jsonrpc connection to the real `askbridge serve` and a scripted UI.
 *
 * One ask = one card session:
 * - an `approval` intent (V3: one question) is an approval card: its subject
 *   and question, the rendered command or edit (`detail`) as a document beside
 *   it, and only the approve/reject/always labels to choose from (localized by
 *   `display` when it has the UI's locale); no free text. Unlike a modal
 *   dialog it closes when the server withdraws it;
 * - otherwise each question in turn is a pick list (multi-select when
 *   `multiSelect`) with an "Other…" entry that asks for free text, or a text
 *   box when it has no options; a plan-review question shows its plan beside
 *   its options (cards.ts);
 * - a timed wait (`wait.timed`) is claimed with `userQuestions/attachWait`; the
 *   claim's one `$/progress` frame starts the local countdown shown in the
 *   title; at zero the card closes and replies ASK_TIMED_OUT (TW7); "Take time"
 *   stops the countdown while keeping the claim (TW5);
 * - dismissing a card replies ASK_CANCELLED; the server's `$/cancelRequest`
 *   (the handler's token) closes the card and replies -32800 (A9); when the
 *   card was on screen, `onWithdrawn` tells the user (another window may have
 *   answered it, M2, or the turn was cancelled);
 * - the claim is released (`$/cancelRequest` for attachWait) whenever the card
 *   ends, after the card's reply (a release first could expire the wait, TW5);
 * - asks arriving while a card is on screen wait in a CardQueue (first come,
 *   first served) and claim only when their turn comes.
 */
import { CancellationToken, CancellationTokenSource, Disposable, ProgressType, ResponseError } from "vscode-jsonrpc";

import { CardContextSource, CardQueue, baseTitle, collectAnswer } from "./cards";
import { Countdown, Timers, realTimers } from "./countdown";
import {
  Answer,
  ApprovalIntent,
  AskParams,
  ClientErrorCode,
  DOMAIN_ERROR_CODE,
  ErrorMessages,
  Methods,
  QuestionItem,
  REQUEST_CANCELLED_CODE,
  WaitFrame,
} from "./protocol";
import { ApprovalCard, CardContext, QuestionUi } from "./ui";

export { CardQueue, FEEDBACK_LABEL, OTHER_LABEL, PlainCards, collectAnswer } from "./cards";

/** What the logic needs from a JSON-RPC connection; LanguageClient and MessageConnection both fit. */
export interface RpcPeer {
  sendRequest<R>(method: string, params: unknown, token?: CancellationToken): Promise<R>;
  sendNotification(method: string, params: unknown): Promise<void>;
  onProgress<P>(type: ProgressType<P>, token: string | number, handler: (value: P) => void): Disposable;
}

const WAIT_FRAME = new ProgressType<WaitFrame>();

/** The JSON-RPC error a client sends to end a card without an answer (protocol.md). */
export function userQuestionError(code: ClientErrorCode): ResponseError<{ name: string; code: string }> {
  return new ResponseError(DOMAIN_ERROR_CODE, ErrorMessages[code], { name: "UserQuestionError", code });
}

export type AskReply = Answer | ResponseError<unknown>;

export interface QuestionHandlerOptions {
  timers?: Timers;
  /** The UI's locale (e.g. "fr", "pt-br") for an approval intent's `display`. */
  locale?: string;
  /** Share one queue with ContinuedQuestions so only one card session is on screen. */
  queue?: CardQueue;
  /** The server withdrew an ask whose card was on screen (not one still waiting in line). */
  onWithdrawn?: (params: AskParams) => void;
}

let claimCounter = 0;

/** Why a card ended without an answer. */
type EndReason = "dismissed" | "timed-out" | "server-cancelled";

/** Handles `userQuestions/ask` requests; register `handleAsk` as the request handler. */
export class QuestionHandler {
  private readonly timers: Timers;
  private readonly locale: string;
  private readonly queue: CardQueue;
  private readonly onWithdrawn: (params: AskParams) => void;

  constructor(
    private readonly peer: RpcPeer,
    private readonly ui: QuestionUi,
    options: QuestionHandlerOptions = {},
  ) {
    this.timers = options.timers ?? realTimers;
    this.locale = (options.locale ?? "en").toLowerCase();
    this.queue = options.queue ?? new CardQueue();
    this.onWithdrawn = options.onWithdrawn ?? (() => undefined);
  }

  readonly handleAsk = async (params: AskParams, token: CancellationToken): Promise<AskReply> => {
    // Waiting in line claims nothing: the server's timer runs until the card is on screen.
    const reply = await this.queue.exclusive(token, () => this.runCards(params, token));
    return reply ?? endReply("server-cancelled");
  };

  private async runCards(params: AskParams, token: CancellationToken): Promise<AskReply> {
    const card = new CardSession(this.peer, params, token, this.timers);
    try {
      const approval = params.questions.length === 1 ? approvalIntent(params.questions[0]) : undefined;
      const answer = approval
        ? await this.confirm(params.questions[0], approval, card.token)
        : await collectAnswer(params.questions, this.ui, card);
      if (answer !== undefined && !card.token.isCancellationRequested) return answer;
      if (card.withdrawnWhileOpen) this.onWithdrawn(params);
      return endReply(card.endReason ?? "dismissed");
    } finally {
      card.dispose();
    }
  }

  private async confirm(
    question: QuestionItem,
    intent: ApprovalIntent,
    token: CancellationToken,
  ): Promise<Answer | undefined> {
    const card = approvalCard(question, intent, this.locale);
    const shown = card.document ? await this.ui.showDocument(card.document) : undefined;
    try {
      const label = await this.ui.confirm(card, token);
      return label === undefined ? undefined : { answers: [{ id: question.id, selected: [label] }] };
    } finally {
      shown?.dispose();
    }
  }
}

function endReply(reason: EndReason): ResponseError<unknown> {
  if (reason === "server-cancelled") return new ResponseError(REQUEST_CANCELLED_CODE, "cancelled by the server");
  return userQuestionError(reason === "timed-out" ? "ASK_TIMED_OUT" : "ASK_CANCELLED");
}

function approvalIntent(question: QuestionItem): ApprovalIntent | undefined {
  return question.intent?.kind === "approval" ? (question.intent as ApprovalIntent) : undefined;
}

/** The approval card: approve, reject, always (when given), localized by `display`; the detail as a document. */
export function approvalCard(question: QuestionItem, intent: ApprovalIntent, locale: string): ApprovalCard {
  const display = pickDisplay(intent.display ?? undefined, locale);
  const buttons = [{ text: display?.approve ?? intent.approve, label: intent.approve }];
  buttons.push({ text: intent.reject, label: intent.reject });
  if (intent.always) buttons.push({ text: intent.always, label: intent.always });
  const subject = intent.subject?.name || undefined;
  const message = display?.question ?? question.question;
  const title = subject ?? (question.header || "askbridge approval");
  const detail = display?.detail ?? question.detail ?? undefined;
  const heading = subject ? `${subject}: ${message}` : message;
  const document = detail ? { title, heading, markdown: detail } : undefined;
  return { questionId: question.id, title, message, document, buttons };
}

function pickDisplay(
  display: Record<string, Record<string, string>> | undefined,
  locale: string,
): Record<string, string> | undefined {
  if (!display) return undefined;
  return display[locale] ?? display[locale.split("-")[0]] ?? display.en;
}

/** The state of one `userQuestions/ask`: its close token, claim and countdown. */
class CardSession implements CardContextSource {
  endReason: EndReason | undefined;
  /** The server's `$/cancelRequest` came while the card was open (not before it showed). */
  withdrawnWhileOpen = false;
  private readonly closing = new CancellationTokenSource();
  private readonly listeners = new Set<() => void>();
  private readonly countdown: Countdown;
  private readonly disposables: Disposable[] = [];
  private claimRelease: CancellationTokenSource | undefined;

  constructor(
    private readonly peer: RpcPeer,
    private readonly params: AskParams,
    requestToken: CancellationToken,
    timers: Timers,
  ) {
    this.countdown = new Countdown(
      timers,
      () => this.changed(),
      () => this.end("timed-out"),
    );
    this.disposables.push(
      requestToken.onCancellationRequested(() => {
        this.withdrawnWhileOpen = this.endReason === undefined;
        this.end("server-cancelled");
      }),
    );
    if (requestToken.isCancellationRequested) this.end("server-cancelled");
    else if (params.wait?.timed) this.claim(params.wait.callId);
  }

  get token(): CancellationToken {
    return this.closing.token;
  }

  contextFor(question: QuestionItem, index: number, count: number): CardContext {
    const title = baseTitle(question, index, count);
    const session = this;
    return {
      token: this.token,
      title: () => title + session.countdownSuffix(),
      onDidChange: (listener) => {
        this.listeners.add(listener);
        return Disposable.create(() => this.listeners.delete(listener));
      },
      get canTakeTime() {
        return session.countdown.state === "running";
      },
      takeTime: () => this.countdown.pause(),
    };
  }

  dispose(): void {
    this.countdown.stop();
    // Release the claim (C4: $/cancelRequest for attachWait) only after the ask's
    // reply is queued: handleAsk returns right after this, and the connection
    // queues the reply before the next macrotask. A release that reached the
    // server first would re-arm its timer (TW5) and, once past the deadline
    // ("Take time"), expire the wait before the answer arrived.
    const release = this.claimRelease;
    this.claimRelease = undefined;
    if (release) {
      setImmediate(() => {
        release.cancel();
        release.dispose();
      });
    }
    for (const d of this.disposables) d.dispose();
    this.listeners.clear();
    this.closing.dispose();
  }

  private countdownSuffix(): string {
    switch (this.countdown.state) {
      case "running":
        return ` · ${this.countdown.remainingSeconds}s left`;
      case "paused":
        return " · take your time";
      case "expired":
        return " · time is up";
      default:
        return "";
    }
  }

  private end(reason: EndReason): void {
    if (this.endReason !== undefined) return;
    this.endReason = reason;
    this.countdown.stop();
    this.closing.cancel();
  }

  private changed(): void {
    for (const listener of [...this.listeners]) listener();
  }

  private claim(callId: string): void {
    const progressToken = `askbridge-claim-${process.pid}-${++claimCounter}`;
    this.claimRelease = new CancellationTokenSource();
    const frames = this.peer.onProgress(WAIT_FRAME, progressToken, (frame) => {
      if (this.endReason === undefined && typeof frame?.remainingMs === "number") {
        this.countdown.start(frame.remainingMs);
      }
    });
    this.disposables.push(frames);
    const params = { sessionId: this.params.sessionId, callId, partialResultToken: progressToken };
    this.peer.sendRequest<null>(Methods.attachWait, params, this.claimRelease.token).then(
      // The wait ended (answered, expired, cancelled): nothing left to count down.
      () => this.countdown.stop(),
      // -32800 after our own release, or the connection closed: the claim is gone either way.
      () => this.countdown.stop(),
    );
  }
}
