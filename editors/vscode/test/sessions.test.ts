/**
 * Stored sessions ("askbridge: Open Session…", src/sessions.ts) against the
 * real `askbridge serve`: a first server stores a session whose two timed
 * questions ran out (continued); a second server on the same data directory
 * lists it, loads it, and its first didChange brings both questions (S2), which
 * are answerable late from this client (M1, L4). A late-answer card whose
 * question is answered by someone else meanwhile closes as `withdrawn` (M5).
 * A client whose server restarted loads the sessions it followed again.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import { after, before, describe, test } from "node:test";

import { CancellationTokenSource } from "vscode-jsonrpc";

import { Methods } from "../src/protocol";
import { RpcPeer } from "../src/questions";
import { SessionClient, describeUpdate } from "../src/sessions";
import { ServerUnderTest, askStep, choose, startServer, stopHost, tempDataDir, waitFor } from "./harness";

const question = (id: string, text: string) => ({
  id,
  header: "Stored",
  question: text,
  options: [{ label: "Yes" }, { label: "No" }],
});
const STEPS = [
  askStep("call-one", [question("one", "First?")], { timeout: 30 }),
  askStep("call-two", [question("two", "Second?")], { timeout: 30 }),
  { text: "carrying on without answers" },
  { text: "got the first answer" },
  { text: "got the second answer" },
];

/** A session whose two questions ran out on the client's countdown (TW7): both continued. */
async function storeSession(dataDir: string): Promise<string> {
  const first = await startServer(STEPS, { askMode: "timed" }, dataDir);
  try {
    const prompt = first.sessions.prompt("ask twice");
    for (let i = 0; i < 2; i++) {
      const card = await first.ui.nextCard();
      if (card.kind !== "pick") throw new Error("expected a pick card");
      await waitFor("countdown", () => card.ctx.canTakeTime);
      first.timers.advance(60_000);
    }
    assert.equal((await prompt).stopReason, "end_turn");
    return (await prompt).sessionId;
  } finally {
    await first.shutdown();
  }
}

describe("the output channel's line of an update", () => {
  test("S4: a failed turn's turn_ended says why, once", () => {
    const error = { name: "ModelError", code: "MODEL_ERROR", message: "cannot connect" };
    const update = { sessionUpdate: "turn_ended", turnId: "t-2", stopReason: "end_turn", error };
    assert.equal(
      describeUpdate({ sessionId: "s-1", update } as never),
      "[s-1] turn t-2 ended: end_turn — failed: cannot connect",
    );
    const plain = { sessionUpdate: "turn_ended", turnId: "t-1", stopReason: "end_turn" };
    assert.equal(describeUpdate({ sessionId: "s-1", update: plain } as never), "[s-1] turn t-1 ended: end_turn");
  });
});

describe("stored sessions: list, load, answer late", () => {
  const dataDir = tempDataDir();
  let stored: string;
  let server: ServerUnderTest;
  before(async () => {
    stored = await storeSession(dataDir);
    server = await startServer([], {}, dataDir);
  });
  after(() => server.stop());

  test("M1/S2: session/list offers it, session/load brings its continued questions in the first didChange", async () => {
    const sessions = await server.sessions.list();
    assert.deepEqual(
      sessions.map((s) => s.sessionId),
      [stored],
    );
    assert.equal(server.continued.entries().length, 0, "nothing shows before the window follows the session");
    await server.sessions.load(sessions[0]);
    assert.deepEqual(server.sessions.followed, [stored]);
    assert.equal(server.sessions.current, stored, "Send Prompt now talks to the opened session");
    assert.deepEqual(server.didChanges[0], {
      sessionId: stored,
      changes: [
        { callId: "call-one", state: "continued", questions: [question("one", "First?")] },
        { callId: "call-two", state: "continued", questions: [question("two", "Second?")] },
      ],
    });
    assert.deepEqual(
      server.continued.entries().map((e) => [e.sessionId, e.callId, e.label]),
      [
        [stored, "call-one", "Stored: First?"],
        [stored, "call-two", "Stored: Second?"],
      ],
    );
  });

  test("L4/L6: the opened session's question is answered from this client and its agent's turn comes here", async () => {
    const entry = server.continued.entries().find((e) => e.callId === "call-one")!;
    const outcome = server.continued.answer(entry, server.ui, new CancellationTokenSource().token);
    choose(await server.ui.nextCard(), ["Yes"]);
    assert.equal(await outcome, "accepted");
    await waitFor("the inbox turn's text", () =>
      server.updatesOf("agent_message_chunk").find((u) => u.content?.text === "got the first answer"),
    );
    await waitFor("settled", () => !server.continued.entries().some((e) => e.callId === "call-one"));
  });

  test("M5: a late-answer card closes as withdrawn when the question is answered elsewhere meanwhile", async () => {
    const entry = server.continued.entries().find((e) => e.callId === "call-two")!;
    const outcome = server.continued.answer(entry, server.ui, new CancellationTokenSource().token);
    const card = await server.ui.nextCard();
    // Another window's late reply (the same connection stands in for it).
    const answer = { answers: [{ id: "two", selected: ["No"] }] };
    const accepted = await server.connection.sendRequest(Methods.answer, {
      sessionId: stored,
      callId: "call-two",
      answer,
    });
    assert.equal(accepted, true);
    assert.equal(await outcome, "withdrawn");
    assert.equal(card.closed, true, "the open card closed by itself");
    assert.equal(server.peer.requests(Methods.answer).length, 1, "this card sent nothing");
  });
});

describe("a restarted server", () => {
  test("M1: the sessions a window followed are loaded again on the new connection; unknown ones are dropped", async () => {
    const dataDir = tempDataDir();
    const stored = await storeSession(dataDir);
    let server = await startServer([], {}, dataDir);
    // The extension's peer follows whichever server is current (extension.ts peerRef).
    const peer: RpcPeer = {
      sendRequest: (method, params, token) => server.peer.sendRequest(method, params, token),
      sendNotification: (method, params) => server.peer.sendNotification(method, params),
      onProgress: (type, token, handler) => server.peer.onProgress(type, token, handler),
    };
    const window = new SessionClient(peer);
    try {
      await window.load(stored);
      const fresh = await window.newSession();
      await server.shutdown();
      server = await startServer([], {}, dataDir); // "askbridge: Restart Server"
      assert.deepEqual(await window.reopen(), [stored, fresh]);
      assert.equal(window.current, undefined, "the next prompt starts a session with the current settings");
      assert.deepEqual(
        server.didChanges.find((d) => d.sessionId === stored)?.changes.map((c) => [c.callId, c.state]),
        [
          ["call-one", "continued"],
          ["call-two", "continued"],
        ],
      );
      await server.shutdown();
      server = await startServer([], {}); // askbridge.dataDir changed: these sessions are not there
      const failures: [string, unknown][] = [];
      assert.deepEqual(await window.reopen((id, error) => failures.push([id, error])), []);
      assert.deepEqual(
        failures.map(([id, error]: [string, any]) => [id, error?.data?.code]),
        [
          [stored, "UNKNOWN_SESSION"],
          [fresh, "UNKNOWN_SESSION"],
        ],
      );
    } finally {
      await server.stop();
      stopHost(dataDir);
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
