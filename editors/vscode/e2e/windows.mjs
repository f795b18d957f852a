// Several windows on one data directory in the real editor (behavior.md H2,
// H7, M1–M3): one code-server, two windows (browser tabs on two workspace
// folders; code-server runs one extension host per window, so each window has
// its own `askbridge serve`, and both attach to the data directory's one host).
// One code-server rather than two: it is how a user gets two windows, and the
// windows share the user settings (askbridge.dataDir) as a user's would.
//
// 0. H7: the caller started a host that says it is another version on the
//    data directory. Window A's server is refused: the error notification
//    holds the server's line, which names `askbridge host --stop --data-dir
//    D`. This script runs that command, takes the notification's "Restart
//    Server", and A's server starts (a host of this version).
// 1. A sends a prompt; the script model asks "Setup: Which database?" and the
//    card shows in A.
// 2. Window B opens ("askbridge: Open Session…" lists A's session): the open
//    question's card shows in B as well (M3).
// 3. B answers Postgres: A's card closes and A says it was answered in another
//    window (M2); the model goes on with B's answer.
// 4. The next question shows in both windows; A answers it and B's card closes,
//    saying so.
//
// Usage: node windows.mjs --vsix X.vsix --askbridge /path/.venv/bin/askbridge
//                         --data-dir DIR --artifacts DIR --work DIR
// Prints one JSON line {"ok": true, ...}; the caller checks the store.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { parseArgs } from "node:util";

import {
  cardRows,
  cardTitle,
  log,
  openEditor,
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
    "data-dir": { type: "string" },
    artifacts: { type: "string" },
    work: { type: "string" },
  },
});

const FIRST = {
  id: "db",
  header: "Setup",
  question: "Which database?",
  options: [{ label: "SQLite" }, { label: "Postgres" }],
};
const SECOND = {
  id: "ci",
  header: "CI",
  question: "Run the tests on every push?",
  options: [{ label: "Yes" }, { label: "No" }],
};
const ask = (id, questions) => ({ toolCalls: [{ id, name: "ask_user_question", arguments: { questions } }] });
const STEPS = [ask("call-first", [FIRST]), ask("call-second", [SECOND]), { text: "Both answers noted." }];

/** `askbridge host …` for the data directory (the real CLI of this checkout). */
function host(...args) {
  return spawnSync(opts.askbridge, ["host", ...args, "--data-dir", opts["data-dir"]], { encoding: "utf8" });
}

/** Until `askbridge host --status` counts `n` front doors (the windows' servers attached). */
async function waitForDoors(n, timeoutMs = 60_000) {
  const start = Date.now();
  for (;;) {
    const status = host("--status");
    if (status.status === 0 && status.stdout.includes(`front doors attached: ${n}\n`)) return;
    if (Date.now() - start > timeoutMs) throw new Error(`not ${n} front doors: ${status.stdout}${status.stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function refusedStart(a, shot) {
  const refused = toast(a, /the server did not start/);
  await refused.waitFor();
  await a.waitForTimeout(3000); // a restart loop would have shown more by now
  const text = await toastText(refused);
  const problems = await toast(a, /did not start|couldn't create connection|crashed|initialization failed/i).count();
  await shot(a, "vscode-windows-refused.png");
  log(`refused: ${text} (${problems} notification(s))`);
  const stop = /`askbridge host --stop --data-dir ([^`]+)`/.exec(text);
  if (!stop || stop[1] !== opts["data-dir"]) throw new Error(`no stop command for the data dir in: ${text}`);
  const stopped = host("--stop");
  log(`ran the line's command: ${stopped.stdout.trim()}`);
  await refused.locator(".monaco-button", { hasText: "Restart Server" }).click();
  await waitForDoors(1);
  return { refused: text, startProblems: problems, stopped: stopped.stdout.trim() };
}

async function scenario(editor, shot) {
  const a = editor.page;
  const started = await refusedStart(a, shot);

  // 1. A's question.
  await sendPrompt(a, "Set up the project");
  await cardTitle(a, /^Setup · \d+s left$/).waitFor();
  log("the question shows in A");

  // 2. B opens the session while the question is open: its card shows there too (M3).
  const b = await editor.openWindow("workspace-b");
  await waitForDoors(2);
  await runCommand(b, "askbridge: Open Session...");
  await cardTitle(b, /^askbridge: Open Session$/).waitFor();
  const listed = await cardRows(b).count();
  await cardRows(b).first().click();
  await cardTitle(b, /^Setup · \d+s left$/).waitFor();
  const opened = await toastText(toast(b, /opened session/));
  await shot(b, "vscode-windows-b-card.png");
  log(`the question shows in B too (${opened})`);

  // 3. B answers: A's card closes and says why.
  await cardRows(b)
    .filter({ hasText: /^Postgres$/ })
    .first()
    .click();
  await cardTitle(a, /^Setup/).waitFor({ state: "hidden" });
  const notice = toast(a, /was answered in another window/);
  await notice.waitFor();
  const answeredInB = await toastText(notice);
  await a.bringToFront();
  await shot(a, "vscode-windows-a-closed.png");
  log(`A: ${answeredInB}`);

  // 4. The next question shows in both; A answers, B's card closes.
  await cardTitle(a, /^CI · \d+s left$/).waitFor();
  await cardTitle(b, /^CI · \d+s left$/).waitFor();
  await cardRows(a).filter({ hasText: /^Yes$/ }).first().click();
  await cardTitle(b, /^CI/).waitFor({ state: "hidden" });
  const noticeB = toast(b, /was answered in another window/);
  await noticeB.waitFor();
  const answeredInA = await toastText(noticeB);
  await b.bringToFront();
  await shot(b, "vscode-windows-b-closed.png");
  log(`B: ${answeredInA}`);

  await a.bringToFront();
  await showOutput(a, "askbridge");
  await waitForText(a, /prompt finished: end_turn/);
  return { ...started, listed, opened, answeredInB, answeredInA };
}

async function main() {
  for (const key of ["vsix", "askbridge", "data-dir", "artifacts", "work"]) {
    if (!opts[key]) throw new Error(`--${key} is required`);
  }
  fs.mkdirSync(opts.work, { recursive: true });
  fs.mkdirSync(opts.artifacts, { recursive: true });
  const editor = await openEditor({
    work: opts.work,
    vsix: opts.vsix,
    settings: {
      "askbridge.model": { kind: "script", steps: STEPS },
      "askbridge.askMode": "timed",
      "askbridge.askTimeout": 600,
      "askbridge.dataDir": opts["data-dir"],
    },
    env: { PATH: `${path.dirname(opts.askbridge)}${path.delimiter}${process.env.PATH ?? ""}`, VSCODE_CLI: "1" },
    logPath: path.join(opts.artifacts, "vscode-windows-code-server.log"),
  });
  const shot = (page, name) => page.screenshot({ path: path.join(opts.artifacts, name) });
  try {
    console.log(JSON.stringify({ ok: true, ...(await scenario(editor, shot)) }));
  } catch (error) {
    await shot(editor.page, "vscode-windows-failure.png").catch(() => undefined);
    throw error;
  } finally {
    await editor.close();
  }
}

main().catch((error) => {
  console.error(`e2e: ${error?.stack ?? String(error)}`);
  process.exit(1);
});
