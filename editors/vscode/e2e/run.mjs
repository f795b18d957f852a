// The real-editor test: code-server (VS Code 1.100 in the browser) in Debian's
// Chromium, driven by playwright-core, with the packaged askbridge .vsix installed
// (lifecycle in editor.mjs).
//
// 1. A script session asks a multi-select question: this script runs
//    "askbridge: Send Prompt", checks two options and "Other…" in the real
//    QuickPick (its title shows the claim's countdown), types "Zig" in the
//    InputBox and waits until the "askbridge" output channel shows the end
//    of the turn.
// 2. A second question with a 5 s timeout: its countdown runs out, the question
//    continues (pending), shows in the status bar item and the tree view, and is
//    answered late from the status bar.
// Screenshots go to the artifacts dir. The caller checks the server's data dir.
//
// Usage: node run.mjs --vsix X.vsix --askbridge /path/.venv/bin/askbridge
//                     --data-dir DIR --artifacts DIR [--work DIR]
// Prints one JSON line {"ok": true, ...} on success; exits 1 with the reason otherwise.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { parseArgs } from "node:util";

import { log, openEditor, runCommand, waitForText } from "./editor.mjs";

const { values: opts } = parseArgs({
  options: {
    vsix: { type: "string" },
    askbridge: { type: "string" },
    "data-dir": { type: "string" },
    artifacts: { type: "string" },
    work: { type: "string" },
  },
});

const QUESTION = {
  id: "langs",
  header: "Stack",
  question: "Which languages should the project use?",
  options: [{ label: "Python (Recommended)", description: "the server is Python" }, { label: "Go" }, { label: "Rust" }],
  multi_select: true,
};
const LATE_QUESTION = {
  id: "db",
  header: "Setup",
  question: "Which database?",
  options: [{ label: "SQLite" }, { label: "Postgres" }],
};
const LATE_TIMEOUT_S = 5; // a per-call timeout (T2 timed schema)
const ask = (id, questions, extra = {}) => ({
  toolCalls: [{ id, name: "ask_user_question", arguments: { questions, ...extra } }],
});
const STEPS = [
  ask("call-e2e", [QUESTION]),
  { text: "Thanks, noted your languages." },
  ask("call-late", [LATE_QUESTION], { timeout: LATE_TIMEOUT_S }),
  { text: "No answer yet; I will carry on meanwhile." },
  { text: "Got your late database answer." },
];

async function sendPrompt(page, text) {
  await runCommand(page, "askbridge: Send Prompt");
  await page.locator(".quick-input-widget .quick-input-title", { hasText: "Send Prompt" }).waitFor();
  const input = page.locator(".quick-input-widget .quick-input-box input").first();
  await input.fill(text);
  await input.press("Enter");
  log(`prompt sent: ${text}`);
}

async function scenario(page, shot) {
  const titled = (text) => page.locator(".quick-input-widget .quick-input-title", { hasText: text });
  const rows = page.locator(".quick-input-widget .quick-input-list .monaco-list-row");

  // 1. Multi-select with "Other…" in the real QuickPick.
  await sendPrompt(page, "Set up the project");
  const title = titled(/^Stack · \d+s left$/);
  await title.waitFor();
  for (const label of ["Python (Recommended)", "Rust", "Other…"]) {
    const row = rows.filter({ hasText: label }).first();
    await row.locator("input[type=checkbox], .quick-input-list-checkbox, .monaco-custom-toggle").first().click();
  }
  const titleText = (await title.innerText()).trim();
  log(`QuickPick title: ${titleText}`);
  await shot("vscode-quickpick.png");
  await page.keyboard.press("Enter");
  await page.locator(".quick-input-widget input[placeholder*='Type your answer']").waitFor();
  await page.keyboard.type("Zig");
  await page.keyboard.press("Enter");
  log("answered");
  await runCommand(page, "Output: Show Output Channels...");
  await page
    .locator(".quick-input-widget .monaco-list-row", { hasText: /^askbridge$/ })
    .first()
    .click();
  await waitForText(page, /prompt finished: end_turn/);
  await shot("vscode-answered.png");

  // 2. A continued question, answered late from the status bar item.
  await sendPrompt(page, "Pick a database");
  const lateTitle = titled(/^Setup · \d+s left$/);
  await lateTitle.waitFor();
  const lateTitleText = (await lateTitle.innerText()).trim();
  log(`timed QuickPick: ${lateTitleText}; letting it run out`);
  await lateTitle.waitFor({ state: "hidden", timeout: (LATE_TIMEOUT_S + 30) * 1000 });
  const waiting = page.locator(".statusbar-item", { hasText: "1 question waiting" });
  await waiting.waitFor();
  const treeHeader = page.locator(".pane-header", { hasText: /waiting questions/i });
  if ((await treeHeader.getAttribute("aria-expanded")) !== "true") await treeHeader.click();
  await page.locator(".monaco-list-row", { hasText: "Setup: Which database?" }).waitFor();
  await shot("vscode-waiting.png");
  log("continued question shown in the status bar and the tree view");
  await waiting.click();
  await titled(/^Setup$/).waitFor(); // no countdown: nothing is waiting on a late reply
  await rows.filter({ hasText: "SQLite" }).first().click();
  await waitForText(page, /Got your late database answer/);
  await waiting.waitFor({ state: "hidden" });
  await shot("vscode-late-answer.png");
  log("late answer delivered");
  return { title: titleText, lateTitle: lateTitleText };
}

async function main() {
  for (const key of ["vsix", "askbridge", "data-dir", "artifacts"]) {
    if (!opts[key]) throw new Error(`--${key} is required`);
  }
  const work = opts.work ?? fs.mkdtempSync(path.join(os.tmpdir(), "askbridge-e2e-"));
  fs.mkdirSync(work, { recursive: true });
  fs.mkdirSync(opts.artifacts, { recursive: true });
  const scriptPath = path.join(work, "script.json");
  fs.writeFileSync(scriptPath, JSON.stringify({ kind: "script", steps: STEPS }));
  const settings = {
    "askbridge.command": [
      opts.askbridge,
      "serve",
      "--model",
      `script:${scriptPath}`,
      "--ask-mode",
      "timed",
      "--ask-timeout",
      "600",
    ],
    "askbridge.dataDir": opts["data-dir"],
  };
  const editor = await openEditor({
    work,
    vsix: opts.vsix,
    settings,
    logPath: path.join(opts.artifacts, "vscode-code-server.log"),
  });
  const shot = (name) => editor.page.screenshot({ path: path.join(opts.artifacts, name) });
  try {
    const report = await scenario(editor.page, shot);
    console.log(JSON.stringify({ ok: true, ...report }));
  } catch (error) {
    await shot("vscode-failure.png").catch(() => undefined);
    throw error;
  } finally {
    await editor.close();
    if (!opts.work) fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(`e2e: ${error?.stack ?? String(error)}`);
  process.exit(1);
});
