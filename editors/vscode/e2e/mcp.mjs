// Questions from an MCP agent in the real editor (behavior.md X1–X5, M1, M3):
// the caller (tests/editors/test_vscode_mcp.py) drives `askbridge mcp` on the
// same data directory with the official `mcp` SDK client, one tool call at a
// time; this window opens no session — it follows the agent's external
// session by itself — and answers each card as it comes:
//
// 1. ask_user_question asked before this window started (M3): its card shows
//    once the extension is up, with the claim's countdown; Postgres.
// 2. approval_prompt for `rm -rf build` (Bash): the approval card, titled
//    with the subject, only Allow / Deny, the command rendered beside it; Allow.
// 3. approval_prompt for `git push --force`: Deny.
// 4. approval_prompt for ExitPlanMode: the plan rendered beside Approve plan /
//    Keep planning / Give feedback…; Approve plan.
// 5. ExitPlanMode again: Give feedback…, typed into the InputBox (--feedback).
// 6. ask_user_question with a 5 s timeout: the card's countdown runs out, the
//    question waits in the status bar and the tree view (named by the agent's
//    session title), and is answered there (Yes). The agent reads it with
//    get_answers, which settles it: this script ends when the status bar item
//    is gone.
//
// Usage: node mcp.mjs --vsix X.vsix --askbridge /path/.venv/bin/askbridge
//                     --data-dir DIR --feedback TEXT --artifacts DIR --work DIR
// Prints one JSON line {"ok": true, ...} with what the cards showed.
import * as fs from "node:fs";
import * as path from "node:path";
import { parseArgs } from "node:util";

import { cardRows, cardTitle, documentFrame, log, openEditor, rowLabels, toast, toastText } from "./editor.mjs";

const { values: opts } = parseArgs({
  options: {
    vsix: { type: "string" },
    askbridge: { type: "string" },
    "data-dir": { type: "string" },
    feedback: { type: "string" },
    artifacts: { type: "string" },
    work: { type: "string" },
  },
});

const CARD_WAIT_MS = 120_000; // the agent asks the next question once it has the last answer

/** Click the row whose label (not its description) is `label`. */
async function pick(page, label) {
  const name = page.locator(".label-name", { hasText: new RegExp(`^${label}$`) });
  await cardRows(page).filter({ has: name }).first().click();
}

/** An approval card: what it shows, then `choice` picked. */
async function approval(page, shot, command, choice, name) {
  const title = cardTitle(page, /^Bash$/);
  await title.waitFor({ timeout: CARD_WAIT_MS });
  const code = documentFrame(page).locator("pre code", { hasText: command });
  await code.waitFor();
  const seen = {
    rows: await rowLabels(page),
    placeholder: await page.locator(".quick-input-widget .quick-input-box input").first().getAttribute("placeholder"),
    heading: (await documentFrame(page).locator("h2").innerText()).trim(),
    command: (await code.innerText()).trim(),
  };
  await shot(name);
  log(`approval card: ${seen.rows.join(" / ")} beside "${seen.heading}": ${seen.command}; ${choice}`);
  // Not waiting for the card to go: the next one has the same title; it is told apart by its command.
  await pick(page, choice);
  return seen;
}

/** A plan-review card: what it shows; the caller picks. */
async function planCard(page, shot, planLine, name) {
  await cardTitle(page, /^Plan$/).waitFor({ timeout: CARD_WAIT_MS });
  await documentFrame(page).locator("li", { hasText: planLine }).waitFor();
  const seen = {
    rows: await rowLabels(page),
    heading: (await documentFrame(page).locator("h1").innerText()).trim(),
  };
  await shot(name);
  log(`plan card: ${seen.rows.join(" / ")} beside "${seen.heading}"`);
  return seen;
}

async function scenario(editor, shot) {
  const { page } = editor;

  // 1. Asked before the window started: it shows without opening any session.
  const first = cardTitle(page, /^Setup · \d+s left$/);
  await first.waitFor({ timeout: CARD_WAIT_MS });
  const firstTitle = (await first.innerText()).trim();
  await shot("vscode-mcp-first.png");
  log(`the agent's question: ${firstTitle}`);
  await pick(page, "Postgres");
  await first.waitFor({ state: "hidden" });

  // 2, 3. Approvals.
  const allowed = await approval(page, shot, "rm -rf build", "Allow", "vscode-mcp-approval.png");
  const denied = await approval(page, shot, "git push --force", "Deny", "vscode-mcp-approval-deny.png");

  // 4, 5. Plan reviews.
  const plan = await planCard(page, shot, "backfill the cache", "vscode-mcp-plan.png");
  await pick(page, "Approve plan"); // the next plan card is told apart by its plan
  await planCard(page, shot, "keep the cache", "vscode-mcp-plan-again.png");
  await pick(page, "Give feedback…");
  await page.locator(".quick-input-widget input[placeholder*='Type your answer']").waitFor();
  await page.keyboard.type(opts.feedback);
  await page.keyboard.press("Enter");
  await cardTitle(page, /^Plan$/).waitFor({ state: "hidden" });
  log("plan feedback sent");

  // 6. A timed question runs out here and is answered late from the tree view.
  const late = cardTitle(page, /^Lint · \d+s left$/);
  await late.waitFor({ timeout: CARD_WAIT_MS });
  await late.waitFor({ state: "hidden", timeout: 60_000 });
  const waiting = page.locator(".statusbar-item", { hasText: "1 question waiting" });
  await waiting.waitFor();
  const treeHeader = page.locator(".pane-header", { hasText: /waiting questions/i });
  if ((await treeHeader.getAttribute("aria-expanded")) !== "true") await treeHeader.click();
  const row = page.locator(".monaco-list-row", { hasText: "Lint: Add a linter?" });
  await row.waitFor();
  // The tree names the session by its title ("<agent> — <cwd>") once the window learnt it.
  const description = row.locator(".label-description", { hasText: " — " });
  await description.waitFor();
  const sessionName = (await description.innerText()).replace(/\u00a0/g, " ").trim();
  await shot("vscode-mcp-waiting.png");
  log(`waiting question of ${sessionName}`);
  await row.click();
  await cardTitle(page, /^Lint$/).waitFor();
  await pick(page, "Yes");
  const sent = await toastText(toast(page, /your answer was sent/));
  await waiting.waitFor({ state: "hidden", timeout: CARD_WAIT_MS }); // the agent's get_answers settled it
  log("the late answer reached the agent");
  return {
    firstTitle,
    approvalRows: allowed.rows,
    approvalPlaceholder: allowed.placeholder,
    approvalHeading: allowed.heading,
    command: allowed.command,
    deniedCommand: denied.command,
    planRows: plan.rows,
    planHeading: plan.heading,
    sessionName,
    sent,
  };
}

async function main() {
  for (const key of ["vsix", "askbridge", "data-dir", "feedback", "artifacts", "work"]) {
    if (!opts[key]) throw new Error(`--${key} is required`);
  }
  fs.mkdirSync(opts.work, { recursive: true });
  fs.mkdirSync(opts.artifacts, { recursive: true });
  const editor = await openEditor({
    work: opts.work,
    vsix: opts.vsix,
    settings: { "askbridge.dataDir": opts["data-dir"] },
    env: { PATH: `${path.dirname(opts.askbridge)}${path.delimiter}${process.env.PATH ?? ""}`, VSCODE_CLI: "1" },
    logPath: path.join(opts.artifacts, "vscode-mcp-code-server.log"),
  });
  const shot = (name) => editor.page.screenshot({ path: path.join(opts.artifacts, name) });
  try {
    console.log(JSON.stringify({ ok: true, ...(await scenario(editor, shot)) }));
  } catch (error) {
    await shot("vscode-mcp-failure.png").catch(() => undefined);
    throw error;
  } finally {
    await editor.close();
  }
}

main().catch((error) => {
  console.error(`e2e: ${error?.stack ?? String(error)}`);
  process.exit(1);
});
