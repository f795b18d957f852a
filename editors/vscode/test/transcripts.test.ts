/**
 * The golden transcripts (protocol/transcripts/*.json) replayed against the
 * extension's question handler, with no askbridge server: the server's side is
 * played by tests/editors/transcript_player.py over real pipes. The player sends
 * the transcript's server messages in order and checks every message the
 * client sends against the transcript's (exactly for the handler's replies,
 * attachWait and answer; see the player's docstring for the rules). Here the
 * extension's wiring (extension.ts: QuestionHandler for `userQuestions/ask`,
 * ContinuedQuestions fed by `userQuestions/didChange`, SessionClient) runs on
 * a vscode-jsonrpc connection, and the scripted user picks what the
 * transcript's recorded answer says; the test stands in for LanguageClient's
 * initialize/shutdown and for the user's session commands.
 *
 * Not replayed, by design:
 * - generic-client-fallback.json: the extension declares
 *   `experimental.userQuestions`, so a server never falls back to
 *   `window/showMessageRequest` for it (W1 is for clients without it).
 * - errors.json: no question-handler part; its client messages are requests
 *   the extension never sends that way and every reply is an error.
 * - pending-late-reply.json is replayed without its ask exchange
 *   (`--omit-asks`): the recorded client replied ASK_TIMED_OUT without
 *   claiming, while the handler claims every timed wait and times out only
 *   from the claim's countdown (C3/TW7). The late reply is checked.
 *
 * The player is run by `$ASKBRIDGE_PYTHON`, else `<repo>/.venv/bin/python`.
 */
import assert from "node:assert/strict";
import { ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, test } from "node:test";

import {
  CancellationTokenSource,
  MessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  createMessageConnection,
} from "vscode-jsonrpc/node";

import { ContinuedQuestions } from "../src/continued";
import { DidChangeParams, Methods, SessionUpdateParams, USER_QUESTIONS_CAPABILITY } from "../src/protocol";
import { CardQueue, OTHER_LABEL, QuestionHandler } from "../src/questions";
import { SessionClient } from "../src/sessions";
import {
  ManualTimers,
  PYTHON,
  REPO_ROOT,
  RecordingPeer,
  ScriptedUi,
  ShownCard,
  choose,
  type,
  waitFor,
} from "./harness";

const PLAYER = path.join(REPO_ROOT, "tests", "editors", "transcript_player.py");
const TRANSCRIPTS = path.join(REPO_ROOT, "protocol", "transcripts");

interface Report {
  ok: boolean;
  problem: string | null;
  exchange: { from: "client" | "server"; message: any }[];
  extras: any[];
}

/** The extension's question wiring, connected to the transcript player. */
class Replay {
  readonly ui = new ScriptedUi();
  readonly timers = new ManualTimers();
  readonly queue = new CardQueue();
  readonly peer: RecordingPeer;
  readonly handler: QuestionHandler;
  readonly continued: ContinuedQuestions;
  readonly sessions: SessionClient;
  readonly updates: SessionUpdateParams[] = [];
  /** Rejects with the player's problem if it exits before `finish`: the client left the transcript. */
  readonly playerGone: Promise<never>;
  private finishing = false;
  private stderr = "";
  private readonly exited: Promise<number | null>;

  private constructor(
    private readonly child: ChildProcess,
    readonly connection: MessageConnection,
    private readonly dir: string,
  ) {
    this.peer = new RecordingPeer(connection);
    this.handler = new QuestionHandler(this.peer, this.ui, { timers: this.timers, queue: this.queue });
    this.continued = new ContinuedQuestions(this.peer, this.queue);
    this.sessions = new SessionClient(this.peer);
    connection.onRequest(Methods.ask, this.handler.handleAsk);
    connection.onNotification(Methods.didChange, (p: DidChangeParams) => this.continued.update(p));
    connection.onNotification(Methods.sessionUpdate, (p: SessionUpdateParams) => this.updates.push(p));
    child.stderr?.on("data", (chunk) => (this.stderr += String(chunk)));
    this.exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
    this.playerGone = this.exited.then((code) => {
      if (this.finishing) return new Promise<never>(() => undefined);
      throw new Error(`the transcript player exited (${code}) early: ${this.report()?.problem ?? this.stderr}`);
    });
    this.playerGone.catch(() => undefined); // raced by `drive`; never an unhandled rejection
  }

  static async start(transcript: string, ...flags: string[]): Promise<Replay> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "askbridge-vscode-transcript-"));
    const args = [PLAYER, path.join(TRANSCRIPTS, transcript), "--report", path.join(dir, "report.json"), ...flags];
    const child = spawn(PYTHON, args, { stdio: ["pipe", "pipe", "pipe"] });
    await new Promise<void>((resolve, reject) => {
      child.once("spawn", () => resolve());
      child.once("error", (error) => reject(new Error(`cannot start ${PYTHON}: ${error.message}`)));
    });
    const connection = createMessageConnection(
      new StreamMessageReader(child.stdout!),
      new StreamMessageWriter(child.stdin!),
    );
    const replay = new Replay(child, connection, dir);
    connection.listen();
    return replay;
  }

  /** Runs the scripted user and editor; fails at once with the player's problem if it gives up. */
  async drive(script: () => Promise<void>): Promise<void> {
    try {
      await Promise.race([script(), this.playerGone]);
    } catch (error) {
      this.discard(); // a failed test leaves no player and no temp dir behind
      throw error;
    }
  }

  /** What LanguageClient does before anything else. */
  async initialize(): Promise<void> {
    await this.connection.sendRequest("initialize", {
      processId: process.pid,
      rootUri: null,
      capabilities: { experimental: USER_QUESTIONS_CAPABILITY },
    });
    await this.connection.sendNotification("initialized", {});
  }

  /** shutdown + exit, then the player's verdict (it exits 0 only if everything matched). */
  async finish(): Promise<Report> {
    this.finishing = true;
    try {
      await this.connection.sendRequest("shutdown");
      await this.connection.sendNotification("exit");
      const code = await this.exited;
      const report = this.report();
      assert.ok(report, `the player wrote no report (exit ${code}): ${this.stderr}`);
      assert.ok(report.ok, report.problem ?? "");
      assert.equal(code, 0, this.stderr);
      return report;
    } finally {
      this.discard();
    }
  }

  private discard(): void {
    this.finishing = true;
    this.connection.dispose();
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  /** The messages the client sent with this method. */
  static sent(report: Report, method: string): any[] {
    return report.exchange.filter((e) => e.from === "client" && e.message.method === method).map((e) => e.message);
  }

  private report(): Report | undefined {
    const file = path.join(this.dir, "report.json");
    return fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, "utf8")) as Report) : undefined;
  }
}

function pickCard(card: ShownCard): Extract<ShownCard, { kind: "pick" }> {
  if (card.kind !== "pick") throw new Error(`expected a pick card, got ${card.kind}`);
  return card;
}

describe("golden transcripts against the question handler", () => {
  test("A7/T3/V8 blocking-ask.json: the reply to a blocking ask is the recorded Answer", async () => {
    const replay = await Replay.start("blocking-ask.json");
    await replay.drive(async () => {
      await replay.initialize();
      const prompt = replay.sessions.prompt("Set up the project");
      const card = pickCard(await replay.ui.nextCard());
      assert.deepEqual(
        card.card.items.map((i) => i.label),
        ["SQLite (Recommended)", "Postgres", OTHER_LABEL],
      );
      assert.equal(card.ctx.title(), "Setup");
      choose(card, ["SQLite (Recommended)"]);
      assert.equal((await prompt).stopReason, "end_turn");
    });
    const report = await replay.finish();
    assert.deepEqual(Replay.sent(report, Methods.attachWait), [], "V5: no wait, no claim");
    assert.deepEqual(report.extras, []);
  });

  test("V2/V4/V8 multi-select-custom.json: labels plus custom text, and custom text without options", async () => {
    const replay = await Replay.start("multi-select-custom.json");
    await replay.drive(async () => {
      await replay.initialize();
      const prompt = replay.sessions.prompt("Plan the stack");
      const langs = pickCard(await replay.ui.nextCard());
      assert.equal(langs.card.canPickMany, true);
      choose(langs, ["Python", "Rust", OTHER_LABEL]);
      type(await replay.ui.nextCard(), "plus a little Zig");
      const name = await replay.ui.nextCard();
      assert.equal(name.kind, "input", "a question without options is a text box");
      type(name, "orders-api");
      assert.equal((await prompt).stopReason, "end_turn");
    });
    const report = await replay.finish();
    assert.deepEqual(report.extras, []);
  });

  test("A9 session-cancel-during-ask.json: $/cancelRequest closes the card and the reply is -32800", async () => {
    const replay = await Replay.start("session-cancel-during-ask.json");
    await replay.drive(async () => {
      await replay.initialize();
      const prompt = replay.sessions.prompt("Set up the project");
      const card = await replay.ui.nextCard();
      await replay.connection.sendNotification(Methods.sessionCancel, { sessionId: replay.sessions.current });
      await waitFor("the server's cancel to close the card", () => card.closed);
      assert.equal((await prompt).stopReason, "cancelled");
    });
    const report = await replay.finish();
    const replies = report.exchange.filter((e) => e.from === "client" && e.message.id === 101);
    assert.deepEqual(
      replies.map((e) => e.message.error?.code),
      [-32800],
    );
  });

  test("TW4/C3/P2 timed-claim.json: the claim's params, the countdown from its frame, then the recorded Answer", async () => {
    const replay = await Replay.start("timed-claim.json");
    await replay.drive(async () => {
      await replay.initialize();
      const prompt = replay.sessions.prompt("Set up the project");
      const card = pickCard(await replay.ui.nextCard());
      // The player's one $/progress frame says remainingMs 60000.
      await waitFor("the countdown", () => card.ctx.canTakeTime);
      assert.equal(card.ctx.title(), "Setup · 60s left");
      assert.equal(replay.peer.requests(Methods.attachWait)[0].settled, "open", "C3: claimed while on screen");
      choose(card, ["SQLite (Recommended)"]);
      assert.equal((await prompt).stopReason, "end_turn");
    });
    const report = await replay.finish();
    const [claim] = Replay.sent(report, Methods.attachWait);
    // C4: the claim is released once the card ended (after the reply; the player checks the order).
    assert.deepEqual(report.extras, [{ jsonrpc: "2.0", method: "$/cancelRequest", params: { id: claim.id } }]);
  });

  test("L1/L4/V7 pending-late-reply.json (ask left out): the late userQuestions/answer is the recorded one", async () => {
    const replay = await Replay.start("pending-late-reply.json", "--omit-asks");
    await replay.drive(async () => {
      await replay.initialize();
      assert.equal((await replay.sessions.prompt("Set up the project")).stopReason, "end_turn");
      assert.equal(replay.ui.shown.length, 0);
      const entry = await waitFor("the continued question", () =>
        replay.continued.entries().find((e) => e.callId === "call-1"),
      );
      assert.equal(entry.label, "Setup: Which database?");
      const outcome = replay.continued.answer(entry, replay.ui, new CancellationTokenSource().token);
      choose(await replay.ui.nextCard(), ["SQLite (Recommended)"]);
      assert.equal(await outcome, "accepted");
      await waitFor("settled", () => replay.continued.entries().length === 0);
      const view = await replay.connection.sendRequest<any>(Methods.list, { sessionId: entry.sessionId });
      assert.deepEqual(view.active, []);
    });
    const report = await replay.finish();
    assert.deepEqual(report.extras, []);
  });
});
