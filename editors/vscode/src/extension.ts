/**
 * The askbridge VS Code extension: starts `askbridge serve` as the settings
 * say (launch.ts, serverClient.ts) and wires the VS Code-free logic (questions.ts,
 * continued.ts, sessions.ts) to VS Code's UI. One client per window: it
 * follows the sessions this window created or opened and every external
 * (MCP) session, and shows every followed session's questions; whenever a
 * server (re)starts, the followed sessions are loaded again so their waiting
 * questions come back.
 *
 * Several windows on one data directory: each window's `askbridge serve`
 * attaches to the directory's one host (H2), so each window follows its own
 * sessions and the host asks every follower (M2); a card another window
 * answered closes here with a notification saying so (withdrawal.ts). A
 * server that cannot start — above all a host of another version (H7) — has
 * said why in one stderr line: that line is the error notification, with
 * "Restart Server" for after the user stopped the other host
 * (serverClient.ts, serverProcess.ts).
 *
 * The settings that start the server (command, env, model, dataDir) are read
 * from the user's configuration only, never a workspace's (settings.ts, S20).
 *
 * Commands: askbridge.newSession, askbridge.sendPrompt, askbridge.openSession,
 * askbridge.cancelTurn, askbridge.answerContinued, askbridge.restartServer.
 * Agent output and tool calls go to the "askbridge" output channel.
 */
import * as os from "os";
import * as vscode from "vscode";
import { LanguageClient, State } from "vscode-languageclient/node";

import { ContinuedEntry, ContinuedQuestions } from "./continued";
import { LaunchProblem, isLaunchProblem, serverLaunch } from "./launch";
import { ANSWER_COMMAND, ContinuedTree } from "./continuedView";
import { AskParams, DidChangeParams, Methods, SessionUpdateParams } from "./protocol";
import { LATE_ANSWER_MESSAGES, pickContinued, pickSession } from "./pickers";
import { launchSetting } from "./settings";
import { CardQueue, QuestionHandler, RpcPeer } from "./questions";
import { ServerConnection } from "./serverClient";
import { SessionClient, describeUpdate } from "./sessions";
import { VsCodeQuestionUi } from "./vscodeUi";
import { withdrawalMessage, withdrawalReason } from "./withdrawal";

class AskbridgeExtension implements vscode.Disposable {
  private readonly output = vscode.window.createOutputChannel("askbridge");
  private readonly ui = new VsCodeQuestionUi();
  private connection: ServerConnection | undefined;
  /** Fires when followed sessions got their titles (the tree view names them). */
  readonly onDidLearnTitles = new vscode.EventEmitter<void>();
  private readonly peerRef: RpcPeer = {
    // An explicit `undefined` token would be sent as a second positional parameter.
    sendRequest: (method, params, token) =>
      token
        ? this.requireClient().sendRequest(method, params, token)
        : this.requireClient().sendRequest(method, params),
    sendNotification: (method, params) => this.requireClient().sendNotification(method, params),
    onProgress: (type, token, handler) => this.requireClient().onProgress(type, token, handler),
  };
  private readonly cardQueue = new CardQueue();
  readonly continuedModel = new ContinuedQuestions(this.peerRef, this.cardQueue);
  readonly sessionClient = new SessionClient(this.peerRef);
  /** Set while this window stops its own server: the cards that closes are not news to the user. */
  private stopping = false;

  async start(): Promise<void> {
    this.stopping = false;
    const config = vscode.workspace.getConfiguration("askbridge");
    const launch = serverLaunch((key) => launchSetting(config, key), { env: process.env, homedir: os.homedir() });
    if (isLaunchProblem(launch)) return this.showLaunchProblem(launch);
    const connection = new ServerConnection(launch, this.output, workspaceCwd());
    const client = connection.client;
    const handler = new QuestionHandler(this.peerRef, this.ui, {
      locale: vscode.env.language,
      queue: this.cardQueue,
      onWithdrawn: (params) => void this.tellWithdrawn(params),
    });
    client.onRequest(Methods.ask, (params: AskParams, token) => {
      this.noticeSession(params?.sessionId);
      return handler.handleAsk(params, token);
    });
    client.onDidChangeState(({ newState }) => newState === State.Running && void this.refollow());
    client.onNotification(Methods.didChange, (params: DidChangeParams) => {
      this.noticeSession(params?.sessionId);
      this.continuedModel.update(params);
    });
    client.onNotification(Methods.sessionUpdate, (params: SessionUpdateParams) => {
      const line = describeUpdate(params);
      if (line) this.output.appendLine(line);
    });
    this.connection = connection;
    this.output.appendLine(`starting ${launch.describe}`);
    const failure = await connection.start();
    if (failure) this.showStartFailure(failure);
  }

  /**
   * The server's own line for why it could not start, e.g. H7's "the askbridge host of D
   * (pid N) is version X, this front door is Y; stop it with `askbridge host --stop
   * --data-dir D` and start again" — after which "Restart Server" is what starts again.
   */
  private showStartFailure(line: string): void {
    this.output.appendLine(`the server did not start: ${line}`);
    void vscode.window
      .showErrorMessage(`askbridge: the server did not start. ${line}`, "Restart Server", "Show Output")
      .then((choice) => {
        if (choice === "Restart Server") void vscode.commands.executeCommand("askbridge.restartServer");
        else if (choice === "Show Output") this.output.show(true);
      });
  }

  /** A question or view change of a session this window did not know: an external one (X1). */
  private noticeSession(sessionId: unknown): void {
    if (typeof sessionId !== "string" || !this.sessionClient.notice(sessionId)) return;
    this.output.appendLine(`following session ${sessionId} (an agent asks through askbridge mcp)`);
    void this.sessionClient.learnTitles().then(
      (learnt) => learnt && this.onDidLearnTitles.fire(),
      (error) => this.output.appendLine(`session titles not read: ${errorText(error)}`),
    );
  }

  /** The one notification for settings that cannot start a server, with a way to fix them. */
  private showLaunchProblem(problem: LaunchProblem): void {
    this.output.appendLine(`cannot start the server: ${problem.message}`);
    if (problem.detail) this.output.appendLine(`  (${problem.detail})`);
    void vscode.window
      .showErrorMessage(`askbridge: cannot start the server: ${problem.message}`, "Open Settings")
      .then((choice) => choice && vscode.commands.executeCommand("workbench.action.openSettings", problem.setting));
  }

  async stop(): Promise<void> {
    const connection = this.connection;
    this.connection = undefined;
    this.stopping = true;
    this.continuedModel.clear();
    await connection?.stop();
  }

  /** A new server connection (start, restart, crash recovery): load the sessions this window follows. */
  private async refollow(): Promise<void> {
    this.continuedModel.clear();
    await this.sessionClient.reopen((sessionId, error) =>
      this.output.appendLine(`session ${sessionId} not reopened: ${errorText(error)}`),
    );
  }

  /** The server withdrew a card that was on screen ($/cancelRequest): say so, and why (withdrawal.ts). */
  private async tellWithdrawn(params: AskParams): Promise<void> {
    if (this.stopping) return;
    const reason = await withdrawalReason(params, this.continuedModel);
    if (this.stopping) return;
    const message = withdrawalMessage(params, reason);
    this.output.appendLine(message);
    void vscode.window.showInformationMessage(message);
  }

  async newSession(): Promise<void> {
    const sessionId = await this.sessionClient.newSession({ cwd: workspaceCwd() });
    this.output.appendLine(`new session ${sessionId}`);
    vscode.window.setStatusBarMessage(`askbridge: session ${sessionId}`, 5000);
  }

  async sendPrompt(text?: string): Promise<void> {
    const prompt =
      text ??
      (await vscode.window.showInputBox({
        title: "askbridge: Send Prompt",
        prompt: "What should the agent do?",
        ignoreFocusOut: true,
      }));
    if (!prompt) return;
    this.output.appendLine(`> ${prompt}`);
    // The prompt resolves when the turn ends, which may take a while: do not hold the command.
    void this.sessionClient.prompt(prompt, { cwd: workspaceCwd() }).then(
      ({ sessionId, stopReason }) => this.output.appendLine(`[${sessionId}] prompt finished: ${stopReason}`),
      (error) => this.showError("prompt failed", error),
    );
  }

  async openSession(): Promise<void> {
    const sessions = await this.sessionClient.list();
    if (sessions.length === 0) {
      void vscode.window.showInformationMessage("askbridge: there are no stored sessions yet.");
      return;
    }
    const picked = await pickSession(sessions, new Set(this.sessionClient.followed));
    if (!picked) return;
    const { sessionId } = picked.session;
    this.continuedModel.forgetSession(sessionId); // its first didChange after the load is a full snapshot
    await this.sessionClient.load(picked.session);
    // Open questions (their cards show now, M3) and continued ones (under Waiting Questions).
    const waiting = this.continuedModel.view(sessionId)?.active.length ?? 0;
    const count = waiting === 1 ? "1 question waiting" : `${waiting} questions waiting`;
    this.output.appendLine(`opened session ${sessionId} (${count})`);
    void vscode.window.showInformationMessage(`askbridge: opened session ${picked.name}: ${count}.`);
  }

  async cancelTurn(): Promise<void> {
    const sessionId = await this.sessionClient.cancel();
    if (!sessionId) void vscode.window.showInformationMessage("askbridge: no session to cancel in this window.");
    else this.output.appendLine(`[${sessionId}] cancel requested`);
  }

  async answerContinued(entry?: ContinuedEntry): Promise<void> {
    const target = entry ?? (await pickContinued(this.continuedModel.entries(), (id) => this.sessionClient.nameOf(id)));
    if (!target) return;
    const source = new vscode.CancellationTokenSource();
    try {
      const outcome = await this.continuedModel.answer(target, this.ui, source.token);
      const message = LATE_ANSWER_MESSAGES[outcome];
      if (message) vscode.window.showInformationMessage(message);
    } finally {
      source.dispose();
    }
  }

  showError(what: string, error: unknown): void {
    const message = errorText(error);
    this.output.appendLine(`${what}: ${message}`);
    void vscode.window.showErrorMessage(`askbridge: ${what}: ${message}`);
  }

  dispose(): void {
    void this.stop();
    this.onDidLearnTitles.dispose();
    this.output.dispose();
  }

  private requireClient(): LanguageClient {
    if (!this.connection) throw new Error("the askbridge server is not running");
    return this.connection.client;
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function workspaceCwd(): string | undefined {
  return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
}

let extension: AskbridgeExtension | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const ext = new AskbridgeExtension();
  extension = ext;
  const tree = new ContinuedTree(ext.continuedModel, (sessionId) => ext.sessionClient.nameOf(sessionId));
  context.subscriptions.push(ext.onDidLearnTitles.event(() => tree.refresh()));
  const guarded =
    <A extends unknown[]>(what: string, run: (...args: A) => Promise<void>) =>
    async (...args: A) => {
      try {
        await run(...args);
      } catch (error) {
        ext.showError(what, error);
      }
    };
  context.subscriptions.push(
    ext,
    tree,
    vscode.window.registerTreeDataProvider("askbridge.continuedQuestions", tree),
    vscode.commands.registerCommand(
      "askbridge.newSession",
      guarded("new session failed", () => ext.newSession()),
    ),
    vscode.commands.registerCommand(
      "askbridge.sendPrompt",
      guarded("send prompt failed", (text?: string) => ext.sendPrompt(typeof text === "string" ? text : undefined)),
    ),
    vscode.commands.registerCommand(
      "askbridge.openSession",
      guarded("opening the session failed", () => ext.openSession()),
    ),
    vscode.commands.registerCommand(
      "askbridge.cancelTurn",
      guarded("cancel failed", () => ext.cancelTurn()),
    ),
    vscode.commands.registerCommand(
      ANSWER_COMMAND,
      guarded("answering failed", (entry?: ContinuedEntry) => ext.answerContinued(entry)),
    ),
    vscode.commands.registerCommand(
      "askbridge.restartServer",
      guarded("restart failed", async () => {
        await ext.stop();
        await ext.start();
      }),
    ),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration("askbridge")) {
        void vscode.window
          .showInformationMessage("askbridge settings changed.", "Restart Server")
          .then((choice) => choice && vscode.commands.executeCommand("askbridge.restartServer"));
      }
    }),
  );
  try {
    await ext.start();
  } catch (error) {
    ext.showError("the server did not start (see the askbridge output)", error);
  }
}

export async function deactivate(): Promise<void> {
  await extension?.stop();
  extension = undefined;
}
