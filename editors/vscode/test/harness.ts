/**
 * Test harness for the extension's VS Code-free logic against the real
 * `askbridge serve` process (protocol.md v1) over vscode-jsonrpc on real pipes.
 *
 * - `startServer(steps, flags)` spawns the server with a script model in a
 *   fresh data dir, initializes it as a client that renders questions
 *   (`experimental.userQuestions`) and registers the extension's
 *   QuestionHandler for `userQuestions/ask`; `startLaunch` does the same for
 *   the command, arguments and environment the extension's settings give
 *   (src/launch.ts); `storedEvents` reads a session's log back, read-only
 *   (`askbridge.host.store.datadir.open_store_read_only`: the host may still run).
 * - Hosts (behavior.md H2): `askbridge serve` runs in the default `--host
 *   auto`, as the extension starts it, so every data dir gets an `askbridge
 *   host` that outlives the front doors. `stop()` stops it
 *   (`askbridge host --stop`), and so does `stopHost(dataDir)`; any host a
 *   test forgot is stopped when the test process exits. Several
 *   `startServer(…, dataDir)` on one dir are several windows on one host.
 * - Data dirs are made under `$ASKBRIDGE_TEST_TMP` (the pytest test's tmp dir,
 *   which tests/conftest.py sweeps for hosts) or the OS tmp dir.
 * - the scripted user, manual clock and recording peer are in scripted.ts
 *   (re-exported here).
 *
 * The server binary is `$ASKBRIDGE_BIN`, else `<repo>/.venv/bin/askbridge`.
 */
import { ChildProcess, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

import {
  MessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  createMessageConnection,
} from "vscode-jsonrpc/node";

import { ContinuedQuestions } from "../src/continued";
import { AskParams, DidChangeParams, Methods, SessionUpdateParams, USER_QUESTIONS_CAPABILITY } from "../src/protocol";
import { CardQueue, QuestionHandler } from "../src/questions";
import { ServerProcess } from "../src/serverProcess";
import { SessionClient } from "../src/sessions";
import { withdrawalMessage, withdrawalReason } from "../src/withdrawal";
import { ManualTimers, RecordingPeer, ScriptedUi } from "./scripted";

export { ManualTimers, RecordingPeer, ScriptedUi, ShownCard, SentRequest, choose, type, waitFor } from "./scripted";

export const REPO_ROOT = path.resolve(__dirname, "..", "..", "..", "..");
export const ASKBRIDGE_BIN = process.env.ASKBRIDGE_BIN || path.join(REPO_ROOT, ".venv", "bin", "askbridge");
export const PYTHON = process.env.ASKBRIDGE_PYTHON || path.join(REPO_ROOT, ".venv", "bin", "python");

export const TEST_TMP = process.env.ASKBRIDGE_TEST_TMP || os.tmpdir();

export interface ServerFlags {
  askMode?: "legacy" | "timed";
  askTimeout?: number;
}

/** Every data dir a server was started on: their hosts are stopped at the latest when the test process exits. */
const hostDirs = new Set<string>();

/** `askbridge host --stop --data-dir D`: the host of `dataDir` is gone when this returns (H6). */
export function stopHost(dataDir: string): void {
  const run = spawnSync(ASKBRIDGE_BIN, ["host", "--stop", "--data-dir", dataDir], {
    encoding: "utf8",
    timeout: 30_000,
  });
  if (run.status !== 0) throw new Error(`askbridge host --stop failed (${run.status}): ${run.stdout}${run.stderr}`);
  hostDirs.delete(dataDir);
}

process.on("exit", () => {
  for (const dataDir of [...hostDirs]) {
    try {
      stopHost(dataDir);
    } catch {
      // the exit goes on; tests/conftest.py sweeps the pytest tmp dir too
    }
  }
});

export class ServerUnderTest {
  readonly updates: SessionUpdateParams[] = [];
  readonly didChanges: DidChangeParams[] = [];
  readonly ui = new ScriptedUi();
  readonly timers = new ManualTimers();
  readonly queue = new CardQueue();
  readonly peer: RecordingPeer;
  readonly handler: QuestionHandler;
  readonly continued: ContinuedQuestions;
  readonly sessions: SessionClient;
  /** The asks the server withdrew while their card was on screen (QuestionHandler's onWithdrawn). */
  readonly withdrawn: AskParams[] = [];
  /** What the extension tells the user for each of them (withdrawal.ts), once the view says why. */
  readonly notices: string[] = [];
  stderr = "";

  readonly child: ChildProcess;

  constructor(
    /** Spawned as the extension spawns it (src/serverProcess.ts). */
    readonly process: ServerProcess,
    readonly connection: MessageConnection,
    readonly dataDir: string,
  ) {
    this.child = process.child;
    this.peer = new RecordingPeer(connection);
    this.handler = new QuestionHandler(this.peer, this.ui, {
      timers: this.timers,
      queue: this.queue,
      onWithdrawn: (params) => {
        this.withdrawn.push(params);
        void withdrawalReason(params, this.continued).then((r) => this.notices.push(withdrawalMessage(params, r)));
      },
    });
    this.continued = new ContinuedQuestions(this.peer, this.queue);
    this.sessions = new SessionClient(this.peer);
    // As extension.ts wires them: a session the host made this client follow is noticed and named (X1).
    const notice = (sessionId: string) => {
      if (this.sessions.notice(sessionId)) void this.sessions.learnTitles().catch(() => undefined);
    };
    connection.onRequest(Methods.ask, (params: AskParams, token) => {
      notice(params.sessionId);
      return this.handler.handleAsk(params, token);
    });
    connection.onNotification(Methods.sessionUpdate, (p: SessionUpdateParams) => this.updates.push(p));
    connection.onNotification(Methods.didChange, (p: DidChangeParams) => {
      this.didChanges.push(p);
      notice(p.sessionId);
      this.continued.update(p);
    });
    this.child.stderr?.on("data", (chunk) => (this.stderr += String(chunk)));
  }

  /** The updates of one kind (e.g. "tool_call_update"). */
  updatesOf(kind: string): Record<string, any>[] {
    return this.updates.map((u) => u.update).filter((u) => u.sessionUpdate === kind);
  }

  /** shutdown + exit and wait for the process; the data dir stays (see `stop`). */
  async shutdown(): Promise<void> {
    const exited = new Promise<void>((resolve) => {
      if (this.child.exitCode !== null || this.child.signalCode !== null) resolve();
      else this.child.once("exit", () => resolve());
    });
    try {
      await Promise.race([this.connection.sendRequest("shutdown"), new Promise((r) => setTimeout(r, 3000))]);
      await this.connection.sendNotification("exit");
    } catch {
      // already gone
    }
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 5000);
    await exited;
    clearTimeout(timer);
    this.connection.dispose();
  }

  /** shutdown, stop the data dir's host, then remove the data dir. */
  async stop(): Promise<void> {
    await this.shutdown();
    stopHost(this.dataDir);
    fs.rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/** A script step that calls ask_user_question (T2 schema: snake_case multi_select). */
export function askStep(callId: string, questions: unknown[], extra: Record<string, unknown> = {}): unknown {
  return { toolCalls: [{ id: callId, name: "ask_user_question", arguments: { questions, ...extra } }] };
}

export function tempDataDir(): string {
  // Short: `<dir>/host.sock` must fit a unix socket path (108 bytes).
  return fs.mkdtempSync(path.join(TEST_TMP, "abvs-"));
}

/** A script-model server in `dataDir` (a fresh one by default). */
export async function startServer(
  steps: unknown[],
  flags: ServerFlags = {},
  dataDir = tempDataDir(),
): Promise<ServerUnderTest> {
  const args = ["serve", "--data-dir", dataDir, "--model", JSON.stringify({ kind: "script", steps })];
  if (flags.askMode) args.push("--ask-mode", flags.askMode);
  if (flags.askTimeout !== undefined) args.push("--ask-timeout", String(flags.askTimeout));
  return startLaunch({ command: ASKBRIDGE_BIN, args, env: process.env }, dataDir);
}

/** The server a launch describes (src/launch.ts); `dataDir` is where the test expects it to keep sessions. */
export async function startLaunch(
  launch: { command: string; args: string[]; env: NodeJS.ProcessEnv },
  dataDir: string,
): Promise<ServerUnderTest> {
  hostDirs.add(dataDir);
  const serverProcess = ServerProcess.spawn({ ...launch, env: launch.env as Record<string, string> });
  const child = serverProcess.child;
  const spawned = new Promise<void>((resolve, reject) => {
    child.once("spawn", () => resolve());
    child.once("error", (error) => reject(new Error(`cannot start ${launch.command}: ${error.message}`)));
  });
  await spawned;
  const connection = createMessageConnection(
    new StreamMessageReader(child.stdout!),
    new StreamMessageWriter(child.stdin!),
  );
  const server = new ServerUnderTest(serverProcess, connection, dataDir);
  connection.listen();
  const init = await connection.sendRequest<any>("initialize", {
    processId: process.pid,
    rootUri: null,
    capabilities: { experimental: USER_QUESTIONS_CAPABILITY },
  });
  if (init?.capabilities?.experimental?.userQuestions?.version !== 1) {
    throw new Error(`server did not declare userQuestions v1: ${JSON.stringify(init)}`);
  }
  await connection.sendNotification("initialized", {});
  serverProcess.started();
  return server;
}

/** A session's event log (host/events.py), read read-only through the project's own (async) store API (a host may hold the dir). */
export function storedEvents(dataDir: string, sessionId: string): Record<string, any>[] {
  const script = [
    "import asyncio, json, sys",
    "from askbridge.host.store.datadir import open_store_read_only",
    "async def main():",
    "    store = open_store_read_only(sys.argv[1])",
    "    try:",
    "        json.dump(await store.load(sys.argv[2]), sys.stdout)",
    "    finally:",
    "        await store.close()",
    "asyncio.run(main())",
  ].join("\n");
  const run = spawnSync(PYTHON, ["-c", script, dataDir, sessionId], { encoding: "utf8" });
  if (run.status !== 0) throw new Error(`reading ${sessionId} from ${dataDir} failed: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

/** The text the model received for a tool call (protocol.md tool_call_update content). */
export function toolResultText(update: Record<string, any>): string {
  return (update.content ?? []).map((c: any) => c?.content?.text ?? "").join("");
}
