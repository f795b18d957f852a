/**
 * The VS Code rendering of question cards (the `QuestionUi` of ui.ts):
 * QuickPick for options (multi-select when asked, "Other…" handled by the
 * logic), InputBox for free text, a modal information message for approval
 * intents, and a webview with the rendered markdown for plans and details.
 *
 * Cards set `ignoreFocusOut` so clicking elsewhere does not dismiss a
 * question; Esc does (→ ASK_CANCELLED). The title follows the card context
 * (countdown); the "Take time" title button appears while a countdown runs.
 */
import * as vscode from "vscode";
import type { CancellationToken } from "vscode-jsonrpc";

import { ApprovalCard, CardContext, PickCard, PickItem, QuestionUi, TextCard } from "./ui";

interface QpItem extends vscode.QuickPickItem {
  source: PickItem;
}

const PLACEHOLDER_DETAIL_CHARS = 160;

export class VsCodeQuestionUi implements QuestionUi {
  private panel: vscode.WebviewPanel | undefined;

  pick(card: PickCard, ctx: CardContext): Promise<PickItem[] | undefined> {
    return new Promise((resolve) => {
      const qp = vscode.window.createQuickPick<QpItem>();
      const items: QpItem[] = card.items.map((source) => ({
        label: source.label,
        description: source.description,
        picked: source.picked,
        alwaysShow: source.isOther,
        source,
      }));
      qp.items = items;
      qp.canSelectMany = card.canPickMany;
      if (card.canPickMany) qp.selectedItems = items.filter((item) => item.picked);
      qp.placeholder = placeholder(card.question, card.detail);
      qp.ignoreFocusOut = true;
      qp.matchOnDescription = true;
      const takeTime: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon("watch"), tooltip: "Take time" };
      const details: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon("info"), tooltip: "Show details" };
      const refresh = () => {
        qp.title = ctx.title();
        qp.buttons = [...(ctx.canTakeTime ? [takeTime] : []), ...(card.detail ? [details] : [])];
      };
      const subscriptions: { dispose(): unknown }[] = [];
      let settled = false;
      const finish = (value: PickItem[] | undefined) => {
        if (settled) return;
        settled = true;
        for (const s of subscriptions) s.dispose();
        qp.dispose();
        resolve(value);
      };
      subscriptions.push(
        qp.onDidAccept(() => {
          if (card.canPickMany) return finish(qp.selectedItems.map((item) => item.source));
          const chosen = qp.selectedItems.length > 0 ? qp.selectedItems : qp.activeItems;
          if (chosen.length > 0) finish([chosen[0].source]);
        }),
        qp.onDidHide(() => finish(undefined)),
        qp.onDidTriggerButton((button) => {
          if (button === takeTime) ctx.takeTime();
          else if (button === details && card.detail) void this.showDocument(card.header || card.question, card.detail);
        }),
        ctx.onDidChange(refresh),
        ctx.token.onCancellationRequested(() => finish(undefined)),
      );
      refresh();
      if (ctx.token.isCancellationRequested) return finish(undefined);
      qp.show();
    });
  }

  input(card: TextCard, ctx: CardContext): Promise<string | undefined> {
    return new Promise((resolve) => {
      const box = vscode.window.createInputBox();
      box.prompt = card.detail ? `${card.prompt} — ${flatten(card.detail)}` : card.prompt;
      box.placeholder = "Type your answer (empty: skip this question)";
      box.ignoreFocusOut = true;
      const takeTime: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon("watch"), tooltip: "Take time" };
      const refresh = () => {
        box.title = ctx.title();
        box.buttons = ctx.canTakeTime ? [takeTime] : [];
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
        box.onDidTriggerButton(() => ctx.takeTime()),
        ctx.onDidChange(refresh),
        ctx.token.onCancellationRequested(() => finish(undefined)),
      );
      refresh();
      if (ctx.token.isCancellationRequested) return finish(undefined);
      box.show();
    });
  }

  async confirm(card: ApprovalCard, token: CancellationToken): Promise<string | undefined> {
    // A modal cannot be closed from code: on cancellation the reply goes at once and the
    // user's later click is ignored (the server ignores late replies anyway).
    const cancelled = new Promise<undefined>((resolve) => token.onCancellationRequested(() => resolve(undefined)));
    const shown = vscode.window.showInformationMessage(
      card.message,
      { modal: true, detail: card.detail },
      ...card.buttons.map((b) => b.text),
    );
    const text = await Promise.race([shown, cancelled]);
    return card.buttons.find((b) => b.text === text)?.label;
  }

  async showDocument(title: string, markdown: string): Promise<void> {
    let html: string;
    try {
      html = await vscode.commands.executeCommand<string>("markdown.api.render", markdown);
    } catch {
      html = `<pre>${escapeHtml(markdown)}</pre>`;
    }
    if (!this.panel) {
      this.panel = vscode.window.createWebviewPanel(
        "askbridge.document",
        title,
        { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
        { enableScripts: false },
      );
      this.panel.onDidDispose(() => (this.panel = undefined));
    } else {
      this.panel.title = title;
      this.panel.reveal(vscode.ViewColumn.Beside, true);
    }
    this.panel.webview.html = page(title, html);
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

function page(title: string, body: string): string {
  return `<!DOCTYPE html><html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline';">
<title>${escapeHtml(title)}</title></head><body>${body}</body></html>`;
}
