/**
 * A window's connection to its server: vscode-languageclient on the process
 * serverProcess.ts spawns from the settings' launch (launch.ts), declaring
 * `experimental.userQuestions = {version: 1}` so the server sends
 * `userQuestions/ask` here (protocol.md "Lifecycle").
 *
 * Starting: `start()` resolves undefined once `initialize` was answered, or
 * the server's own line for why it could not start (H7: a host of another
 * version; any front door that wrote its reason and exited). Such a start is
 * not retried — the same line would come back — and the client's own
 * "Server initialization failed" message is left out, since the extension
 * shows the line. After a start, a server that stops (the host died, H8) is
 * restarted as vscode-languageclient does by default: up to 4 times in 3
 * minutes; the new front door starts a new host.
 */
import * as vscode from "vscode";
import {
  ClientCapabilities,
  CloseAction,
  CloseHandlerResult,
  ErrorHandler,
  FeatureState,
  LanguageClient,
  State,
  StaticFeature,
} from "vscode-languageclient/node";

import { ServerLaunch } from "./launch";
import { USER_QUESTIONS_CAPABILITY } from "./protocol";
import { ServerProcess } from "./serverProcess";

/** Declares that this client renders `userQuestions/ask` itself. */
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

export class ServerConnection {
  readonly client: LanguageClient;
  /** The process of the current connection (a restart after a crash spawns a new one). */
  private process: ServerProcess | undefined;

  constructor(launch: ServerLaunch, output: vscode.OutputChannel, cwd: string | undefined) {
    let restarts: ErrorHandler | undefined;
    this.client = new LanguageClient(
      "askbridge",
      "askbridge",
      // Spawned here, not by the client, to keep what a failed start wrote (its stderr still
      // reaches the output channel: vscode-languageclient copies it).
      async () => {
        this.process = ServerProcess.spawn(launch, cwd);
        return this.process.child;
      },
      {
        documentSelector: [],
        outputChannel: output,
        initializationFailedHandler: () => false,
        errorHandler: {
          error: (error, message, count) => restarts!.error(error, message, count),
          closed: async (): Promise<CloseHandlerResult> => {
            if (await this.process?.startupFailure()) return { action: CloseAction.DoNotRestart, handled: true };
            return restarts!.closed();
          },
        },
      },
    );
    restarts = this.client.createDefaultErrorHandler();
    this.client.registerFeature(new UserQuestionsFeature());
    // Registered before any other listener: the process counts as started before anyone reacts.
    this.client.onDidChangeState(({ newState }) => newState === State.Running && this.process?.started());
  }

  /** Start; undefined once running, else the server's line for why it could not start. Other failures throw. */
  async start(): Promise<string | undefined> {
    try {
      await this.client.start();
      return undefined;
    } catch (error) {
      const failure = await this.process?.startupFailure();
      if (!failure) throw error;
      return failure;
    }
  }

  /** shutdown + exit when running; a start that failed has nothing to shut down (its process is ended). */
  async stop(): Promise<void> {
    if (this.client.isRunning()) await this.client.stop();
    else this.process?.kill();
  }
}
