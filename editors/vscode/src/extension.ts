/**
 * The askbridge VS Code extension: starts `askbridge serve` (setting
 * `askbridge.command`, plus `--data-dir` from `askbridge.dataDir`) with
 * vscode-languageclient, declares `experimental.userQuestions = {version: 1}`
 * so the server sends `userQuestions/ask` here, and wires the VS Code-free
 * logic (questions.ts, continued.ts, sessions.ts) to VS Code's UI.
 *
 * Commands: askbridge.newSession, askbridge.sendPrompt,
 * askbridge.answerContinued, askbridge.restartServer. Agent output and tool
 * calls go to the "askbridge" output channel.
 */
import * as os from "os";
import * as path from "path";
import * as vscode from "vscode";
import {
  ClientCapabilities,
  FeatureState,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  StaticFeature,
} from "vscode-languageclient/node";

import { ContinuedEntry, ContinuedQuestions, LateAnswerOutcome } from "./continued";
import { ANSWER_COMMAND, ContinuedTree } from "./continuedView";
import { DidChangeParams, Methods, SessionUpdateParams, USER_QUESTIONS_CAPABILITY } from "./protocol";
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

/** The server command from the settings; a relative program path is taken from the first workspace folder. */
export function serverCommand(config: vscode.WorkspaceConfiguration): { command: string; args: string[] } {
  const words = config.get<string[]>("command") ?? ["askbridge", "serve"];
  if (words.length === 0 || !words[0]) throw new Error("askbridge.command is empty");
  let [command] = words;
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  if (folder && command.includes("/") && !path.isAbsolute(command)) command = path.join(folder, command);
  const args = words.slice(1);
  const dataDir = (config.get<string>("dataDir") ?? "").trim();
  if (dataDir) args.push("--data-dir", dataDir.replace(/^~(?=$|\/)/, os.homedir()));
  return { command, args };
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
    onProgress: (type, token, handler) => this.requireClient().onProgress(type, token, handler),
  };
  private readonly cardQueue = new CardQueue();
  readonly continuedModel = new ContinuedQuestions(this.peerRef, this.cardQueue);
  readonly sessionClient = new SessionClient(this.peerRef);

  async start(): Promise<void> {
    const { command, args } = serverCommand(vscode.workspace.getConfiguration("askbridge"));
    const serverOptions: ServerOptions = { command, args, options: { cwd: workspaceCwd() } };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [],
      outputChannel: this.output,
    };
    const client = new LanguageClient("askbridge", "askbridge", serverOptions, clientOptions);
    client.registerFeature(new UserQuestionsFeature());
    const handler = new QuestionHandler(this.peerRef, this.ui, {
      locale: vscode.env.language,
      queue: this.cardQueue,
    });
    client.onRequest(Methods.ask, handler.handleAsk);
    client.onNotification(Methods.didChange, (params: DidChangeParams) => this.continuedModel.update(params));
    client.onNotification(Methods.sessionUpdate, (params: SessionUpdateParams) => {
      const line = describeUpdate(params);
      if (line) this.output.appendLine(line);
    });
    this.client = client;
    this.output.appendLine(`starting ${[command, ...args].join(" ")}`);
    await client.start();
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.continuedModel.clear();
    this.sessionClient.forget();
    if (client) await client.stop();
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

  async answerContinued(entry?: ContinuedEntry): Promise<void> {
    const target = entry ?? (await this.chooseContinued());
    if (!target) return;
    const source = new vscode.CancellationTokenSource();
    try {
      const outcome = await this.continuedModel.answer(target, this.ui, source.token);
      const messages: Record<LateAnswerOutcome, string | undefined> = {
        accepted: "askbridge: your answer was sent to the agent.",
        rejected: "askbridge: this question can no longer be answered.",
        queued: "askbridge: a reply to this question is already waiting for the agent.",
        dismissed: undefined,
        withdrawn: "askbridge: this question is no longer waiting (it was answered elsewhere); its card was closed.",
      };
      const message = messages[outcome];
      if (message) vscode.window.showInformationMessage(message);
    } finally {
      source.dispose();
    }
  }

  showError(what: string, error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    this.output.appendLine(`${what}: ${message}`);
    void vscode.window.showErrorMessage(`askbridge: ${what}: ${message}`);
  }

  dispose(): void {
    void this.stop();
    this.output.dispose();
  }

  private async chooseContinued(): Promise<ContinuedEntry | undefined> {
    const entries = this.continuedModel.entries();
    if (entries.length <= 1) return entries[0];
    const picked = await vscode.window.showQuickPick(
      entries.map((entry) => ({ label: entry.label, description: entry.sessionId, entry })),
      { title: "askbridge: questions waiting for an answer", ignoreFocusOut: true },
    );
    return picked?.entry;
  }

  private requireClient(): LanguageClient {
    if (!this.client) throw new Error("the askbridge server is not running");
    return this.client;
  }
}

function workspaceCwd(): string | undefined {
  return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
}

let extension: AskbridgeExtension | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const ext = new AskbridgeExtension();
  extension = ext;
  const tree = new ContinuedTree(ext.continuedModel);
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
    ext.showError("could not start the server (check askbridge.command)", error);
  }
}

export async function deactivate(): Promise<void> {
  await extension?.stop();
  extension = undefined;
}
