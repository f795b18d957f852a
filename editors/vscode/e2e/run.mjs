// The real-editor test: code-server (VS Code 1.100 in the browser) in Debian's
// Chromium, driven by playwright-core, with the packaged askbridge .vsix installed
// (lifecycle in editor.mjs). The server is started from the settings alone:
// no askbridge.command (the default finds `askbridge` on PATH), the script
// model in askbridge.model, askbridge.askMode/askTimeout, and
// askbridge.env's XDG_STATE_HOME choosing the (default) data directory.
//
// 1. A script session asks a multi-select question: this script runs
//    "askbridge: Send Prompt", checks two options and "Other…" in the real
//    QuickPick (its title shows the claim's countdown), types "Zig" in the
//    InputBox and waits until the "askbridge" output channel shows the end
//    of the turn.
// 2. A second question with a 5 s timeout: its countdown runs out, the question
//    continues (pending), shows in the status bar item and the tree view, and is
//    answered late from the status bar.
// 3. A third question is withdrawn by the server while on screen ("askbridge:
//    Cancel Turn" from a keybinding, so the question's QuickPick stays up until
//    the server's $/cancelRequest): the card closes and a notification says so.
// 4. "askbridge: Open Session…" lists the stored sessions; the one the caller
//    stored beforehand (--stored-session, with a continued question) is opened,
//    its question shows in the tree view and is answered there.
// 5. askbridge.command is set to a program that is not installed and the
//    server restarted: exactly one notification says what to set.
// Screenshots go to the artifacts dir. The caller checks the server's data dir.
//
// Usage: node run.mjs --vsix X.vsix --askbridge /path/.venv/bin/askbridge
//                     --state-home DIR --stored-session ID --artifacts DIR [--work DIR]
// Prints one JSON line {"ok": true, ...} on success; exits 1 with the reason otherwise.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { parseArgs } from "node:util";

import {
  log,
  openEditor,
  restartWithCommand,
  runCommand,
  sendPrompt,
  showOutput,
  toast,
  toastText,
  waitForText,
} from "./editor.mjs";

const { values: opts } = parseArgs({
  options: {
    vsix: { type: "string" },
    askbridge: { type: "string" },
    "state-home": { type: "string" },
    "stored-session": { type: "string" },
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
const WITHDRAWN_QUESTION = {
  id: "deploy",
  header: "Deploy",
  question: "Deploy to production now?",
  options: [{ label: "Yes" }, { label: "No" }],
};
const LATE_TIMEOUT_S = 5; // a per-call timeout (T2 timed schema)
const CANCEL_KEY = "ctrl+alt+k";
const ask = (id, questions, extra = {}) => ({
  toolCalls: [{ id, name: "ask_user_question", arguments: { questions, ...extra } }],
});
const STEPS = [
  ask("call-e2e", [QUESTION]),
  { text: "Thanks, noted your languages." },
  ask("call-late", [LATE_QUESTION], { timeout: LATE_TIMEOUT_S }),
  { text: "No answer yet; I will carry on meanwhile." },
  { text: "Got your late database answer." },
  ask("call-withdrawn", [WITHDRAWN_QUESTION]),
];

async function scenario(editor, shot, storedSession) {
  const { page } = editor;
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
  await showOutput(page, "askbridge");
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

  // 3. The server withdraws the card on screen: it closes and the user is told.
  await sendPrompt(page, "Deploy");
  const deployTitle = titled(/^Deploy · \d+s left$/);
  await deployTitle.waitFor();
  await page.keyboard.press("Control+Alt+K"); // askbridge.cancelTurn; the QuickPick keeps the focus
  await deployTitle.waitFor({ state: "hidden" });
  const withdrawn = toast(page, /"Deploy: Deploy to production now\?" was closed/);
  await withdrawn.waitFor();
  const withdrawnText = await toastText(withdrawn);
  await shot("vscode-withdrawn.png");
  log(`withdrawn card: ${withdrawnText}`);
  await waitForText(page, /prompt finished: cancelled/);

  // 4. Open a stored session: its continued question shows here and is answered here.
  await runCommand(page, "askbridge: Open Session...");
  await titled(/^askbridge: Open Session$/).waitFor();
  await rows.filter({ hasText: storedSession }).first().click();
  const opened = toast(page, /opened session .*: 1 question waiting/);
  await opened.waitFor();
  const openedText = await toastText(opened);
  const storedRow = page.locator(".monaco-list-row", { hasText: "Stored: Which editor do you use?" });
  await storedRow.waitFor();
  await shot("vscode-opened-session.png");
  log(`opened the stored session: ${openedText}`);
  await storedRow.click();
  await titled(/^Stored$/).waitFor();
  await rows.filter({ hasText: "VS Code" }).first().click();
  await waitForText(page, /Got the answer to the stored question/);
  await page.locator(".statusbar-item", { hasText: "question waiting" }).waitFor({ state: "hidden" });
  log("the stored session's question was answered");

  // 5. A program that is not installed: one notification saying what to set.
  await restartWithCommand(editor, ["askbridge-not-installed", "serve"]);
  const notFound = toast(page, /cannot start the server/);
  await notFound.waitFor();
  await page.waitForTimeout(2000); // anything else the restart would show has shown by now
  const notFoundText = await toastText(notFound);
  const problems = await toast(page, /cannot start|couldn't create connection|Couldn't start/i).count();
  await shot("vscode-not-found.png");
  log(`not found: ${notFoundText} (${problems} notification(s))`);
  return {
    title: titleText,
    lateTitle: lateTitleText,
    withdrawn: withdrawnText,
    opened: openedText,
    notFound: notFoundText,
    launchProblems: problems,
  };
}

async function main() {
  for (const key of ["vsix", "askbridge", "state-home", "stored-session", "artifacts"]) {
    if (!opts[key]) throw new Error(`--${key} is required`);
  }
  const work = opts.work ?? fs.mkdtempSync(path.join(os.tmpdir(), "askbridge-e2e-"));
  fs.mkdirSync(work, { recursive: true });
  fs.mkdirSync(opts.artifacts, { recursive: true });
  // Only the settings start the server: `askbridge` from PATH, the model and ask settings as flags.
  const settings = {
    "askbridge.model": { kind: "script", steps: STEPS },
    "askbridge.askMode": "timed",
    "askbridge.askTimeout": 600,
    "askbridge.env": { XDG_STATE_HOME: opts["state-home"] },
  };
  const editor = await openEditor({
    work,
    vsix: opts.vsix,
    settings,
    keybindings: [{ key: CANCEL_KEY, command: "askbridge.cancelTurn" }],
    // As when a user runs `code .` in a terminal where askbridge is on PATH: VSCODE_CLI=1 makes
    // the server keep this environment instead of replacing it with a login shell's.
    env: { PATH: `${path.dirname(opts.askbridge)}${path.delimiter}${process.env.PATH ?? ""}`, VSCODE_CLI: "1" },
    logPath: path.join(opts.artifacts, "vscode-code-server.log"),
  });
  const shot = (name) => editor.page.screenshot({ path: path.join(opts.artifacts, name) });
  try {
    const report = await scenario(editor, shot, opts["stored-session"]);
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
