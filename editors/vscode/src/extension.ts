/**
 * The askbridge VS Code extension: starts `askbridge serve` as the settings
 * say (launch.ts) with vscode-languageclient, declares
 * `experimental.userQuestions = {version: 1}` so the server sends
 * `userQuestions/ask` here, and wires the VS Code-free logic (questions.ts,
 * continued.ts, sessions.ts) to VS Code's UI. One client per window: it
 * follows the sessions this window created or opened, and shows every
 * followed session's questions; whenever a server (re)starts, the followed
 * sessions are loaded again so their waiting questions come back.
 *
 * Commands: askbridge.newSession, askbridge.sendPrompt, askbridge.openSession,
 * askbridge.cancelTurn, askbridge.answerContinued, askbridge.restartServer.
 * Agent output and tool calls go to the "askbridge" output channel.
 */
import * as os from "os";
import * as vscode from "vscode";
import {
  ClientCapabilities,
  FeatureState,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
  StaticFeature,
} from "vscode-languageclient/node";

import { ContinuedEntry, ContinuedQuestions, questionsLabel } from "./continued";
import { LaunchProblem, isLaunchProblem, serverLaunch } from "./launch";
import { ANSWER_COMMAND, ContinuedTree } from "./continuedView";
import { AskParams, DidChangeParams, Methods, SessionUpdateParams, USER_QUESTIONS_CAPABILITY } from "./protocol";
import { LATE_ANSWER_MESSAGES, pickContinued, pickSession } from "./pickers";
import { CardQueue, QuestionHandler, RpcPeer } from "./questions";
import { SessionClient, describeUpdate } from "./sessions";
import { VsCodeQuestionUi } from "./vscodeUi";

/** Declares that this client renders `userQuestions/ask` itself (protocol.md "Lifecycle"). */
class UserQuestionsFeature implements StaticFeature {
  fillClientCapabilities(capabilities: ClientCapabilities): void {
    capabilities.experimental = { ...(capabilities.experimental ?? {}), ...USER_QUESTIONS_CAPABILITY };
  }
  initialize(): void {}
  getState(): FeatureState {
    return { kind: "static" };
  }
  clear(): void {}
}

class AskbridgeExtension implements vscode.Disposable {
  private readonly output = vscode.window.createOutputChannel("askbridge");
  private readonly ui = new VsCodeQuestionUi();
  private client: LanguageClient | undefined;
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
    const launch = serverLaunch((key) => config.get(key), {
      workspaceFolder: workspaceCwd(),
      env: process.env,
      homedir: os.homedir(),
    });
    if (isLaunchProblem(launch)) return this.showLaunchProblem(launch);
    const { command, args, env } = launch;
    const serverOptions: ServerOptions = { command, args, options: { cwd: workspaceCwd(), env } };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [],
      outputChannel: this.output,
    };
    const client = new LanguageClient("askbridge", "askbridge", serverOptions, clientOptions);
    client.registerFeature(new UserQuestionsFeature());
    const handler = new QuestionHandler(this.peerRef, this.ui, {
      locale: vscode.env.language,
      queue: this.cardQueue,
      onWithdrawn: (params) => this.tellWithdrawn(params),
    });
    client.onRequest(Methods.ask, handler.handleAsk);
    client.onDidChangeState(({ newState }) => newState === State.Running && void this.refollow());
    client.onNotification(Methods.didChange, (params: DidChangeParams) => this.continuedModel.update(params));
    client.onNotification(Methods.sessionUpdate, (params: SessionUpdateParams) => {
      const line = describeUpdate(params);
      if (line) this.output.appendLine(line);
    });
    this.client = client;
    this.output.appendLine(`starting ${launch.describe}`);
    await client.start();
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
    const client = this.client;
    this.client = undefined;
    this.stopping = true;
    this.continuedModel.clear();
    if (client) await client.stop();
  }

  /** A new server connection (start, restart, crash recovery): load the sessions this window follows. */
  private async refollow(): Promise<void> {
    this.continuedModel.clear();
    await this.sessionClient.reopen((sessionId, error) =>
      this.output.appendLine(`session ${sessionId} not reopened: ${errorText(error)}`),
    );
  }

  /** The server withdrew a card that was on screen ($/cancelRequest): say so, it vanished. */
  private tellWithdrawn(params: AskParams): void {
    if (this.stopping) return;
    const label = questionsLabel(params.questions ?? []);
    const message = `askbridge: "${label}" was closed: the agent no longer waits for this answer (another window may have answered it, or the turn was cancelled).`;
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
    const waiting = this.continuedModel.entries().filter((entry) => entry.sessionId === sessionId).length;
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
    this.output.dispose();
  }

  private requireClient(): LanguageClient {
    if (!this.client) throw new Error("the askbridge server is not running");
    return this.client;
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
