/**
 * The interface between the question logic (questions.ts) and whatever shows
 * the questions: VS Code's QuickPick/InputBox/modal dialogs in the extension
 * (vscodeUi.ts), a scripted implementation in the node tests.
 *
 * The logic decides *what* to show (cards) and what the user's choice means
 * (the Answer); the UI only renders a card and reports the choice. A card must
 * close itself when its context's token is cancelled (the server cancelled the
 * ask, or the countdown ran out) and resolve `undefined`. A document (a plan,
 * the command an approval is about) is shown beside its card and closed by the
 * logic when the card ends.
 */
import type { CancellationToken, Disposable } from "vscode-jsonrpc";

export interface PickItem {
  label: string;
  description?: string;
  /** The "Other…" entry: choosing it asks for free text. */
  isOther?: boolean;
  /** Pre-checked (multi-select) when a card is shown again after "Other…" was abandoned. */
  picked?: boolean;
}

/** Markdown shown rendered beside a card: a plan (plan-review), an approval's command or edit. */
export interface DocumentCard {
  title: string;
  /** Plain text above the rendered markdown (the approval's subject and question). */
  heading?: string;
  markdown: string;
}

/** One question with options: a QuickPick. */
export interface PickCard {
  questionId: string;
  question: string;
  header?: string;
  /** Markdown supporting text (V2); shown with the question, never as an option. */
  detail?: string;
  /** The detail is already shown as this document beside the card: not repeated, reopenable. */
  document?: DocumentCard;
  items: PickItem[];
  canPickMany: boolean;
}

/** Free text: "Other…" or a question without options. An empty string skips the question. */
export interface TextCard {
  questionId: string;
  question: string;
  header?: string;
  detail?: string;
  prompt: string;
}

/**
 * An `approval` intent (V3): the subject and the question, the rendered command
 * or edit as `document`, and only the `buttons` (in order; the chosen one's
 * `label` answers). Nothing else: no free text.
 */
export interface ApprovalCard {
  questionId: string;
  /** The subject (e.g. the tool asking), else the header, else "askbridge approval". */
  title: string;
  /** The question, localized by `display` when it has the UI's locale. */
  message: string;
  document?: DocumentCard;
  buttons: { text: string; label: string }[];
}

/** What a card may read while it is open (the title changes as the countdown ticks). */
export interface CardContext {
  /** Cancelled when the card must close (server cancel, countdown over). */
  readonly token: CancellationToken;
  /** The full title: header, position in the batch, countdown ("· 42s left") or "· take your time". */
  title(): string;
  /** Fires whenever `title()` or `canTakeTime` changes. */
  onDidChange(listener: () => void): Disposable;
  /** A "Take time" button is offered only while a countdown runs. */
  readonly canTakeTime: boolean;
  takeTime(): void;
}

export interface QuestionUi {
  /** Resolve the picked items (the same objects as `card.items`), or undefined when dismissed/closed. */
  pick(card: PickCard, ctx: CardContext): Promise<PickItem[] | undefined>;
  /** Resolve the text typed, or undefined when dismissed/closed. */
  input(card: TextCard, ctx: CardContext): Promise<string | undefined>;
  /** The chosen button's `label`, or undefined when dismissed or closed (token). */
  confirm(card: ApprovalCard, token: CancellationToken): Promise<string | undefined>;
  /** Show markdown rendered beside the card; the returned disposable closes it. */
  showDocument(doc: DocumentCard): Promise<Disposable>;
}
