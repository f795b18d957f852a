/**
 * The test's stand-ins inside the client, shared by every node test:
 * - `ScriptedUi` is the test's user: each card it is shown waits in a queue
 *   until the test takes it (`nextCard`) and answers, dismisses or watches it;
 *   documents shown beside cards are recorded with whether they were closed.
 * - `ManualTimers` drive the client's countdown without sleeping.
 * - `RecordingPeer` wraps a connection to see which requests the logic sent
 *   and whether they are still open (a claim is an open attachWait).
 */
import { CancellationToken, Disposable, MessageConnection, ProgressType } from "vscode-jsonrpc/node";

import { Timers } from "../src/countdown";
import { RpcPeer } from "../src/questions";
import { ApprovalCard, CardContext, DocumentCard, PickCard, PickItem, QuestionUi, TextCard } from "../src/ui";

/** Poll `check` until it returns a value other than undefined/false (events arrive asynchronously). */
export async function waitFor<T>(what: string, check: () => T | undefined | false, timeoutMs = 15000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const value = check();
    if (value !== undefined && value !== false) return value as T;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export class ManualTimers implements Timers {
  private current = 1_000_000;
  private readonly tickers = new Set<() => void>();

  now(): number {
    return this.current;
  }

  every(_everyMs: number, tick: () => void): Disposable {
    this.tickers.add(tick);
    return Disposable.create(() => this.tickers.delete(tick));
  }

  advance(ms: number): void {
    this.current += ms;
    for (const tick of [...this.tickers]) tick();
  }

  get running(): number {
    return this.tickers.size;
  }
}

export interface SentRequest {
  method: string;
  params: any;
  settled: "open" | "resolved" | "rejected";
  result?: unknown;
  error?: any;
  cancelledByClient: boolean;
}

export class RecordingPeer implements RpcPeer {
  readonly sent: SentRequest[] = [];

  constructor(private readonly connection: MessageConnection) {}

  sendRequest<R>(method: string, params: unknown, token?: CancellationToken): Promise<R> {
    const record: SentRequest = { method, params, settled: "open", cancelledByClient: false };
    this.sent.push(record);
    token?.onCancellationRequested(() => (record.cancelledByClient = true));
    const promise = token
      ? this.connection.sendRequest<R>(method, params, token)
      : this.connection.sendRequest<R>(method, params);
    return promise.then(
      (result) => {
        record.settled = "resolved";
        record.result = result;
        return result;
      },
      (error) => {
        record.settled = "rejected";
        record.error = error;
        throw error;
      },
    );
  }

  sendNotification(method: string, params: unknown): Promise<void> {
    return this.connection.sendNotification(method, params);
  }

  onProgress<P>(type: ProgressType<P>, token: string | number, handler: (value: P) => void): Disposable {
    return this.connection.onProgress(type, token, handler);
  }

  requests(method: string): SentRequest[] {
    return this.sent.filter((r) => r.method === method);
  }
}

export type ShownCard =
  | { kind: "pick"; card: PickCard; ctx: CardContext; closed: boolean; resolve(v: PickItem[] | undefined): void }
  | { kind: "input"; card: TextCard; ctx: CardContext; closed: boolean; resolve(v: string | undefined): void }
  | {
      kind: "confirm";
      card: ApprovalCard;
      token: CancellationToken;
      closed: boolean;
      resolve(v: string | undefined): void;
    };

/** The test's user. Cards queue up until the test takes them with `nextCard`. */
export class ScriptedUi implements QuestionUi {
  readonly shown: ShownCard[] = [];
  /** Every document shown beside a card; `closed` once the logic closed it. */
  readonly documents: (DocumentCard & { closed: boolean })[] = [];
  private taken = 0;

  pick(card: PickCard, ctx: CardContext): Promise<PickItem[] | undefined> {
    return this.show((resolve) => ({ kind: "pick", card, ctx, closed: false, resolve }), ctx.token);
  }

  input(card: TextCard, ctx: CardContext): Promise<string | undefined> {
    return this.show((resolve) => ({ kind: "input", card, ctx, closed: false, resolve }), ctx.token);
  }

  confirm(card: ApprovalCard, token: CancellationToken): Promise<string | undefined> {
    return this.show((resolve) => ({ kind: "confirm", card, token, closed: false, resolve }), token);
  }

  async showDocument(doc: DocumentCard): Promise<Disposable> {
    const shown = { ...doc, closed: false };
    this.documents.push(shown);
    return Disposable.create(() => (shown.closed = true));
  }

  /** The next card shown (waits for it). */
  async nextCard(): Promise<ShownCard> {
    const index = this.taken++;
    return waitFor(`card #${index + 1}`, () => this.shown[index]);
  }

  private show<T>(
    make: (resolve: (v: T | undefined) => void) => ShownCard,
    token: CancellationToken,
  ): Promise<T | undefined> {
    return new Promise<T | undefined>((resolve) => {
      let done = false;
      const finish = (v: T | undefined) => {
        if (!done) {
          done = true;
          resolve(v);
        }
      };
      const shown = make(finish as (v: T | undefined) => void);
      // A real card closes itself when its token is cancelled.
      token.onCancellationRequested(() => {
        shown.closed = true;
        finish(undefined);
      });
      this.shown.push(shown);
    });
  }
}

/** Choose items of a pick card by label ("Other…" included). */
export function choose(shown: ShownCard, labels: string[]): void {
  if (shown.kind !== "pick") throw new Error(`expected a pick card, got ${shown.kind}`);
  const items = labels.map((label) => {
    const item = shown.card.items.find((i) => i.label === label);
    if (!item) throw new Error(`no item ${label} in ${shown.card.items.map((i) => i.label).join(", ")}`);
    return item;
  });
  shown.resolve(items);
}

export function type(shown: ShownCard, text: string): void {
  if (shown.kind !== "input") throw new Error(`expected an input card, got ${shown.kind}`);
  shown.resolve(text);
}
