// The approval and plan-review cards (V3 intents) in the real editor:
// code-server in Debian's Chromium (editor.mjs), with the extension's server
// played by tests/editors/transcript_player.py from a transcript the caller
// writes (a script model cannot send intents; `askbridge mcp`'s approval_prompt
// will, X5). The transcript's prompt brings two asks:
// 1. an approval (subject "Bash", the command as a shell block): the QuickPick
//    must hold only Allow / Deny, titled "Bash", with the command rendered in
//    the document beside it; this script picks Allow and the document closes;
// 2. a plan review: the plan rendered beside Approve plan / Keep planning /
//    Give feedback…; this script gives feedback in the InputBox.
// The player checks the replies exactly and writes its report when the
// extension shuts it down (askbridge.command is then set to a missing program
// and the server restarted, so no second player starts). The editor is closed
// only once that report is there: clicking "Restart Server" returns before the
// player has stopped, and closing the editor then kills the player's process
// group with it, report unwritten (seen once in CI under load).
//
// Usage: node intents.mjs --vsix X.vsix --player-command JSON --player-report FILE
//                         --feedback TEXT --artifacts DIR [--work DIR]
// Prints one JSON line {"ok": true, ...} with what the cards showed.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { parseArgs } from "node:util";

import {
  documentFrame,
  log,
  openEditor,
  restartWithCommand,
  rowLabels,
  sendPrompt,
  showOutput,
  waitForText,
} from "./editor.mjs";

const { values: opts } = parseArgs({
  options: {
    vsix: { type: "string" },
    "player-command": { type: "string" },
    "player-report": { type: "string" },
    feedback: { type: "string" },
    artifacts: { type: "string" },
    work: { type: "string" },
  },
});

async function scenario(editor, shot) {
  const { page } = editor;
  const titled = (text) => page.locator(".quick-input-widget .quick-input-title", { hasText: text });
  const rows = page.locator(".quick-input-widget .quick-input-list .monaco-list-row");
  const docTab = (name) => page.locator(".tabs-container .tab", { hasText: name });

  await sendPrompt(page, "Set up the project"); // the transcript's prompt
  // 1. The approval card.
  await titled(/^Bash$/).waitFor();
  const approvalRows = await rowLabels(page);
  const approvalPlaceholder = await page
    .locator(".quick-input-widget .quick-input-box input")
    .first()
    .getAttribute("placeholder");
  const command = documentFrame(page).locator("pre code");
  await command.waitFor();
  const commandText = (await command.innerText()).trim();
  const heading = (await documentFrame(page).locator("h2").innerText()).trim();
  await shot("vscode-approval.png");
  log(`approval card: ${approvalRows.join(" / ")} beside "${heading}": ${commandText}`);
  await rows
    .filter({ hasText: /^Allow$/ })
    .first()
    .click();
  await docTab("Bash").waitFor({ state: "hidden" });

  // 2. The plan-review card.
  await titled(/^Plan$/).waitFor();
  const planRows = await rowLabels(page);
  await documentFrame(page).locator("li", { hasText: "backfill" }).waitFor();
  const planHeading = (await documentFrame(page).locator("h1").innerText()).trim();
  // What the plan shows (innerText leaves out what CSS hides).
  const planText = (await documentFrame(page).locator("body").innerText()).trim();
  await shot("vscode-plan-review.png");
  log(`plan card: ${planRows.join(" / ")} beside "${planHeading}"`);
  await rows.filter({ hasText: "Give feedback" }).first().click();
  await page.locator(".quick-input-widget input[placeholder*='Type your answer']").waitFor();
  await page.keyboard.type(opts.feedback);
  await page.keyboard.press("Enter");
  await docTab("Plan").waitFor({ state: "hidden" });

  await showOutput(page, "askbridge");
  await waitForText(page, /prompt finished: end_turn/);
  // Stop the player (shutdown + exit) without starting another.
  await restartWithCommand(editor, ["askbridge-not-installed", "serve"]);
  await fileWritten(opts["player-report"], 60_000);
  return {
    approvalRows,
    approvalPlaceholder,
    approvalHeading: heading,
    command: commandText,
    planRows,
    planHeading,
    planText,
  };
}

/** Resolves once `file` exists (the player writes it whole, by a rename). */
async function fileWritten(file, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (!fs.existsSync(file)) {
    if (Date.now() > deadline) throw new Error(`the player wrote no report in ${timeoutMs} ms: ${file}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function main() {
  for (const key of ["vsix", "player-command", "player-report", "feedback", "artifacts"]) {
    if (!opts[key]) throw new Error(`--${key} is required`);
  }
  const work = opts.work ?? fs.mkdtempSync(path.join(os.tmpdir(), "askbridge-e2e-intents-"));
  fs.mkdirSync(work, { recursive: true });
  fs.mkdirSync(opts.artifacts, { recursive: true });
  const editor = await openEditor({
    work,
    vsix: opts.vsix,
    settings: { "askbridge.command": JSON.parse(opts["player-command"]) },
    logPath: path.join(opts.artifacts, "vscode-intents-code-server.log"),
  });
  const shot = (name) => editor.page.screenshot({ path: path.join(opts.artifacts, name) });
  try {
    console.log(JSON.stringify({ ok: true, ...(await scenario(editor, shot)) }));
  } catch (error) {
    await shot("vscode-intents-failure.png").catch(() => undefined);
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
