/**
 * The VS Code rendering of question cards (the `QuestionUi` of ui.ts):
 * QuickPick for options (multi-select when asked, "Other…" handled by the
 * logic), InputBox for free text, and a webview with the rendered markdown
 * for documents (plans, an approval's command or edit, details).
 *
 * An approval card is a QuickPick too, with only its approve/reject/always
 * items, titled with the subject, its command or edit rendered beside it. Not
 * a modal dialog: a modal cannot be closed from code, so a card the server
 * withdraws (answered in another window, turn cancelled) would stay on screen
 * and block the window.
 *
 * Cards set `ignoreFocusOut` so clicking elsewhere does not dismiss a
 * question; Esc does (→ ASK_CANCELLED). The title follows the card context
 * (countdown); the "Take time" title button appears while a countdown runs.
 */
import { randomBytes } from "node:crypto";
import MarkdownIt from "markdown-it";
import * as vscode from "vscode";
import type { CancellationToken } from "vscode-jsonrpc";

import { ApprovalCard, CardContext, DocumentCard, PickCard, PickItem, QuestionUi, TextCard } from "./ui";

const PLACEHOLDER_DETAIL_CHARS = 160;

interface QuickPickSpec<T> {
  items: (vscode.QuickPickItem & { value: T })[];
  canPickMany: boolean;
  placeholder: string;
  title: () => string;
  /** The title buttons now, and what a click on one does. */
  buttons: () => { button: vscode.QuickInputButton; run: () => void }[];
  onDidChange?: (listener: () => void) => { dispose(): unknown };
  token: CancellationToken;
}

export class VsCodeQuestionUi implements QuestionUi {
  private panel: vscode.WebviewPanel | undefined;
  private shownDocument = 0;

  pick(card: PickCard, ctx: CardContext): Promise<PickItem[] | undefined> {
    const document =
      card.document ?? (card.detail ? { title: card.header || card.question, markdown: card.detail } : undefined);
    const opened: { dispose(): unknown }[] = [];
    const details = document && this.documentButton(document, card.document ? "Show it again" : "Show details", opened);
    return this.quickPick({
      items: card.items.map((source) => ({
        label: source.label,
        description: source.description,
        picked: source.picked,
        alwaysShow: source.isOther,
        value: source,
      })),
      canPickMany: card.canPickMany,
      // A document beside the card is not repeated in the placeholder.
      placeholder: card.document ? card.question : placeholder(card.question, card.detail),
      title: () => ctx.title(),
      buttons: () => [...(ctx.canTakeTime ? [this.takeTimeButton(ctx)] : []), ...(details ? [details] : [])],
      onDidChange: (listener) => ctx.onDidChange(listener),
      token: ctx.token,
    }).finally(() => opened.forEach((d) => d.dispose()));
  }

  async confirm(card: ApprovalCard, token: CancellationToken): Promise<string | undefined> {
    const opened: { dispose(): unknown }[] = [];
    const again = card.document && this.documentButton(card.document, "Show it again", opened);
    const picked = await this.quickPick({
      items: card.buttons.map((button) => ({ label: button.text, value: button.label })),
      canPickMany: false,
      placeholder: card.message,
      title: () => card.title,
      buttons: () => (again ? [again] : []),
      token,
    }).finally(() => opened.forEach((d) => d.dispose()));
    return picked?.[0];
  }

  input(card: TextCard, ctx: CardContext): Promise<string | undefined> {
    return new Promise((resolve) => {
      const box = vscode.window.createInputBox();
      box.prompt = card.detail ? `${card.prompt} — ${flatten(card.detail)}` : card.prompt;
      box.placeholder = "Type your answer (empty: skip this question)";
      box.ignoreFocusOut = true;
      const takeTime = this.takeTimeButton(ctx);
      const refresh = () => {
        box.title = ctx.title();
        box.buttons = ctx.canTakeTime ? [takeTime.button] : [];
      };
      const subscriptions: { dispose(): unknown }[] = [];
      let settled = false;
      const finish = (value: string | undefined) => {
        if (settled) return;
        settled = true;
        for (const s of subscriptions) s.dispose();
        box.dispose();
        resolve(value);
      };
      subscriptions.push(
        box.onDidAccept(() => finish(box.value)),
        box.onDidHide(() => finish(undefined)),
        box.onDidTriggerButton(() => takeTime.run()),
        ctx.onDidChange(refresh),
        ctx.token.onCancellationRequested(() => finish(undefined)),
      );
      refresh();
      if (ctx.token.isCancellationRequested) return finish(undefined);
      box.show();
    });
  }

  async showDocument(doc: DocumentCard): Promise<vscode.Disposable> {
    const html = MARKDOWN.render(doc.markdown);
    if (!this.panel) {
      this.panel = vscode.window.createWebviewPanel(
        "askbridge.document",
        doc.title,
        { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
        { enableScripts: false },
      );
      this.panel.onDidDispose(() => (this.panel = undefined));
    } else {
      this.panel.title = doc.title;
      this.panel.reveal(vscode.ViewColumn.Beside, true);
    }
    this.panel.webview.html = page(doc, html);
    const shown = ++this.shownDocument;
    // Close the panel only if it still shows this document (a later card may have reused it).
    return new vscode.Disposable(() => shown === this.shownDocument && this.panel?.dispose());
  }

  private quickPick<T>(spec: QuickPickSpec<T>): Promise<T[] | undefined> {
    type Item = vscode.QuickPickItem & { value: T };
    return new Promise((resolve) => {
      const qp = vscode.window.createQuickPick<Item>();
      qp.items = spec.items;
      qp.canSelectMany = spec.canPickMany;
      if (spec.canPickMany) qp.selectedItems = spec.items.filter((item) => item.picked);
      qp.placeholder = spec.placeholder;
      qp.ignoreFocusOut = true;
      qp.matchOnDescription = true;
      let actions = spec.buttons();
      const refresh = () => {
        qp.title = spec.title();
        actions = spec.buttons();
        qp.buttons = actions.map((a) => a.button);
      };
      const subscriptions: { dispose(): unknown }[] = [];
      let settled = false;
      const finish = (value: T[] | undefined) => {
        if (settled) return;
        settled = true;
        for (const s of subscriptions) s.dispose();
        qp.dispose();
        resolve(value);
      };
      subscriptions.push(
        qp.onDidAccept(() => {
          if (spec.canPickMany) return finish(qp.selectedItems.map((item) => item.value));
          const chosen = qp.selectedItems.length > 0 ? qp.selectedItems : qp.activeItems;
          if (chosen.length > 0) finish([chosen[0].value]);
        }),
        qp.onDidHide(() => finish(undefined)),
        qp.onDidTriggerButton((button) => actions.find((a) => a.button === button)?.run()),
        spec.token.onCancellationRequested(() => finish(undefined)),
      );
      if (spec.onDidChange) subscriptions.push(spec.onDidChange(refresh));
      refresh();
      if (spec.token.isCancellationRequested) return finish(undefined);
      qp.show();
    });
  }

  private takeTimeButton(ctx: CardContext): { button: vscode.QuickInputButton; run: () => void } {
    return { button: { iconPath: new vscode.ThemeIcon("watch"), tooltip: "Take time" }, run: () => ctx.takeTime() };
  }

  /** The info button that (re)opens a card's document; what it opens closes with the card. */
  private documentButton(
    doc: DocumentCard,
    tooltip: string,
    opened: { dispose(): unknown }[],
  ): { button: vscode.QuickInputButton; run: () => void } {
    return {
      button: { iconPath: new vscode.ThemeIcon("info"), tooltip },
      run: () => void this.showDocument(doc).then((d) => opened.push(d)),
    };
  }
}

function flatten(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > PLACEHOLDER_DETAIL_CHARS ? `${line.slice(0, PLACEHOLDER_DETAIL_CHARS - 1)}…` : line;
}

function placeholder(question: string, detail: string | undefined): string {
  return detail ? `${question} — ${flatten(detail)}` : question;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

// The markdown comes from the agent and is what an approval or a plan review asks to approve
// (S17): its raw HTML is shown as text, never rendered, so a comment, a collapsed <details> or a
// hidden span cannot keep a step out of sight (VS Code's own `markdown.api.render` renders raw
// HTML).
const MARKDOWN = new MarkdownIt({ html: false, linkify: false });

// No scripts, no network, and no style but this sheet, as a second guard. Theme colours keep code readable;
// the top padding keeps the first lines clear of the card's QuickPick, which opens over them.
const STYLE = `body{font-family:var(--vscode-font-family);color:var(--vscode-foreground);padding:5em 1em 0}
pre{background:var(--vscode-textCodeBlock-background);padding:.6em;overflow:auto}
code{font-family:var(--vscode-editor-font-family)}`;

function page(doc: DocumentCard, body: string): string {
  const heading = doc.heading ? `<h2>${escapeHtml(doc.heading)}</h2>` : "";
  const nonce = randomBytes(16).toString("base64");
  return `<!DOCTYPE html><html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'nonce-${nonce}';">
<style nonce="${nonce}">${STYLE}</style><title>${escapeHtml(doc.title)}</title></head><body>${heading}${body}</body></html>`;
}
