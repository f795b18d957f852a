/**
 * Questions from an agent outside askbridge (behavior.md X1–X6, M1, M3) in a
 * window: the real `askbridge mcp` (test/mcpAgent.ts) and a window's
 * `askbridge serve` on one data directory, one host. The window opens no
 * session: a client that renders questions follows every external session.
 *
 * - M3/X1: a question the agent asked before the window started shows when it
 *   starts; the window names the session by its title ("<agent> — <cwd>"),
 *   and the agent gets the window's answer;
 * - X5: `approval_prompt` for a Bash command is an approval card (subject,
 *   the command as a shell block beside it, only Allow / Deny); Allow and Deny
 *   reach the agent as its result; `ExitPlanMode` is a plan-review card whose
 *   Approve plan allows and whose feedback denies with the user's words;
 * - X6: the agent going away while its card is on screen closes the card
 *   ("the agent stopped waiting"); the question is still answerable late.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import { after, before, describe, test } from "node:test";

import { CancellationTokenSource } from "vscode-jsonrpc";

import { FEEDBACK_LABEL } from "../src/questions";
import { ServerUnderTest, choose, startServer, stopHost, tempDataDir, type, waitFor } from "./harness";
import { McpAgent, ToolResult } from "./mcpAgent";

const DB = {
  id: "db",
  header: "Setup",
  question: "Which database?",
  options: [{ label: "SQLite" }, { label: "Postgres" }],
};
const AGENT = "node-agent";

const resultJson = (result: ToolResult) => JSON.parse(result.content[0].text);

describe("an MCP agent asks through a window", () => {
  const dataDir = tempDataDir();
  const cwd = fs.mkdtempSync(`${dataDir}-cwd`);
  let agent: McpAgent;
  let window: ServerUnderTest;
  before(async () => {
    agent = await McpAgent.start(dataDir, AGENT, cwd);
  });
  after(async () => {
    await agent.close();
    await window?.shutdown();
    stopHost(dataDir);
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(cwd, { recursive: true, force: true });
  });

  test("M3/X1: a question asked before the window started shows in it, without opening a session; the agent gets the answer", async () => {
    const call = agent.callTool("ask_user_question", { questions: [DB], timeout: 600 });
    await agent.asking(call.id); // logged and open, with no window to show it yet
    window = await startServer([], {}, dataDir);
    const card = await window.ui.nextCard();
    if (card.kind !== "pick") throw new Error("expected a pick card");
    assert.equal(card.card.question, "Which database?");
    await waitFor("the claim's countdown (C3)", () => card.ctx.canTakeTime);
    assert.match(card.ctx.title(), /^Setup · \d+s left$/);
    const [sessionId] = window.sessions.followed;
    assert.equal(window.sessions.followed.length, 1, "the window follows the agent's session by itself");
    assert.equal(window.sessions.current, undefined, "an external session takes no prompts");
    await waitFor("the session's title", () => window.sessions.nameOf(sessionId) !== sessionId);
    assert.equal(window.sessions.nameOf(sessionId), `${AGENT} — ${cwd}`);
    choose(card, ["Postgres"]);
    assert.deepEqual(resultJson(await call.result), { answers: [{ id: "db", selected: ["Postgres"] }] });
  });

  test("X5: approval_prompt for a Bash command is an approval card; Allow reaches the agent as allow", async () => {
    const input = { command: "rm -rf build", description: "Clean the build" };
    const call = agent.callTool("approval_prompt", { tool_name: "Bash", input });
    const card = await window.ui.nextCard();
    if (card.kind !== "confirm") throw new Error(`expected an approval card, got ${card.kind}`);
    assert.equal(card.card.title, "Bash");
    assert.equal(card.card.message, "Allow Bash?");
    assert.deepEqual(
      card.card.buttons.map((b) => b.label),
      ["Allow", "Deny"],
    );
    assert.deepEqual(card.card.document, {
      title: "Bash",
      heading: "Bash: Allow Bash?",
      markdown: "Clean the build\n\n```sh\nrm -rf build\n```",
    });
    card.resolve("Allow");
    assert.deepEqual(resultJson(await call.result), { behavior: "allow", updatedInput: input });
    assert.equal(window.ui.documents.at(-1)?.closed, true, "the command's document closed with the card");
  });

  test("X5: Deny reaches the agent as deny", async () => {
    const call = agent.callTool("approval_prompt", { tool_name: "Bash", input: { command: "git push --force" } });
    const card = await window.ui.nextCard();
    if (card.kind !== "confirm") throw new Error(`expected an approval card, got ${card.kind}`);
    card.resolve("Deny");
    assert.deepEqual(resultJson(await call.result), { behavior: "deny", message: "The user denied this Bash call." });
  });

  test("X5: ExitPlanMode is a plan-review card; Approve plan allows, feedback denies with the user's words", async () => {
    const plan = "# Clean up\n\n1. remove the build directory\n2. backfill the cache";
    const approve = agent.callTool("approval_prompt", { tool_name: "ExitPlanMode", input: { plan } });
    const card = await window.ui.nextCard();
    if (card.kind !== "pick") throw new Error("expected a pick card");
    assert.deepEqual(
      card.card.items.map((i) => i.label),
      ["Approve plan", "Keep planning", FEEDBACK_LABEL],
    );
    assert.equal(card.card.document?.markdown, plan);
    choose(card, ["Approve plan"]);
    assert.deepEqual(resultJson(await approve.result), { behavior: "allow", updatedInput: { plan } });

    const revise = agent.callTool("approval_prompt", { tool_name: "ExitPlanMode", input: { plan } });
    choose(await window.ui.nextCard(), [FEEDBACK_LABEL]);
    type(await window.ui.nextCard(), "keep the cache");
    assert.deepEqual(resultJson(await revise.result), { behavior: "deny", message: "keep the cache" });
  });

  test("X6: the agent going away closes its card in the window, saying so; the question stays answerable", async () => {
    const call = agent.callTool("ask_user_question", { questions: [DB], timeout: -1 });
    call.result.catch(() => undefined); // the agent is gone before any result
    const card = await window.ui.nextCard();
    await agent.close();
    await waitFor("the card closed", () => card.closed);
    const notice = await waitFor("the notice", () => window.notices.at(-1));
    assert.equal(
      notice,
      'askbridge: "Setup: Which database?" was closed: the agent stopped waiting (its time ran out, or it went away). It is under Waiting Questions, where you can still answer it.',
    );
    const entry = await waitFor("the waiting question", () => window.continued.entries()[0]);
    const outcome = window.continued.answer(entry, window.ui, new CancellationTokenSource().token);
    choose(await window.ui.nextCard(), ["SQLite"]);
    assert.equal(await outcome, "accepted");
  });
});
