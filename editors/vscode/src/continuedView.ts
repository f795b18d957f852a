/**
 * Where continued questions show in VS Code: a status bar item ("2 questions
 * waiting", hidden at zero) and the "askbridge: Waiting Questions" tree view in
 * the Explorer. Both run `askbridge.answerContinued`; the tree passes the
 * clicked entry.
 */
import * as vscode from "vscode";

import { ContinuedEntry, ContinuedQuestions } from "./continued";

export const ANSWER_COMMAND = "askbridge.answerContinued";

export class ContinuedTree implements vscode.TreeDataProvider<ContinuedEntry>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<ContinuedEntry | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly status: vscode.StatusBarItem;
  private readonly subscription: { dispose(): unknown };

  constructor(
    private readonly model: ContinuedQuestions,
    /** The session's title when known, else its id. */
    private readonly sessionName: (sessionId: string) => string = (id) => id,
  ) {
    this.status = vscode.window.createStatusBarItem("askbridge.waiting", vscode.StatusBarAlignment.Left, 100);
    this.status.name = "askbridge waiting questions";
    this.status.command = ANSWER_COMMAND;
    this.subscription = model.onDidChange(() => this.refresh());
    this.refresh();
  }

  getChildren(element?: ContinuedEntry): ContinuedEntry[] {
    return element ? [] : this.model.entries();
  }

  getTreeItem(entry: ContinuedEntry): vscode.TreeItem {
    const item = new vscode.TreeItem(entry.label, vscode.TreeItemCollapsibleState.None);
    item.id = `${entry.sessionId}/${entry.callId}`;
    item.description = this.sessionName(entry.sessionId);
    item.tooltip = entry.questions.map((q) => `• ${q.question}`).join("\n");
    item.iconPath = new vscode.ThemeIcon("question");
    item.contextValue = "askbridge.continuedQuestion";
    item.command = { command: ANSWER_COMMAND, title: "Answer", arguments: [entry] };
    return item;
  }

  dispose(): void {
    this.subscription.dispose();
    this.status.dispose();
    this.changed.dispose();
  }

  /** Show the model's entries again (also when only the sessions' names changed). */
  refresh(): void {
    const count = this.model.entries().length;
    if (count === 0) {
      this.status.hide();
    } else {
      this.status.text = `$(question) ${count} ${count === 1 ? "question" : "questions"} waiting`;
      this.status.tooltip = "askbridge: answer a question the agent is still waiting for";
      this.status.show();
    }
    this.changed.fire(undefined);
  }
}
