// S20 in the real editor: a workspace whose `.vscode/settings.json` (written
// by the caller into `<work>/workspace` before the editor opens) sets
// askbridge.command, askbridge.env, askbridge.model and askbridge.dataDir.
// The workspace is trusted (editor.mjs disables Workspace Trust), which is the
// case the declarations alone do not cover. The user's settings hold the
// script model and askbridge.env's XDG_STATE_HOME.
//
// This script sends a prompt, waits for the turn to end (or fail), and reads
// the running `askbridge serve`'s command line and environment from /proc (the
// process in code-server's process group whose arguments hold `serve`). The
// caller checks that the workspace's program never ran, its endpoint got no
// connection, and the session is in the user's data directory.
//
// Usage: node workspaceSettings.mjs --vsix X.vsix --askbridge /path/bin/askbridge
//        --state-home DIR --probe-var NAME --artifacts DIR --work DIR
// Prints one JSON line {"ok": true, turn, serve: {argv, probe, stateHome}}.
import * as fs from "node:fs";
import * as path from "node:path";
import { parseArgs } from "node:util";

import { log, openEditor, sendPrompt, showOutput, waitForText } from "./editor.mjs";

const { values: opts } = parseArgs({
  options: {
    vsix: { type: "string" },
    askbridge: { type: "string" },
    "state-home": { type: "string" },
    "probe-var": { type: "string" },
    artifacts: { type: "string" },
    work: { type: "string" },
  },
});

const STEPS = [{ text: "Hello from the user's own model." }];

/** The processes of process group `pgid` (code-server's), as {pid, argv, env}. */
function processGroup(pgid) {
  const found = [];
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // The command name in field 2 may hold spaces: the fields after its ")" are fixed.
      const stat = fs.readFileSync(`/proc/${name}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) !== pgid) continue;
      const argv = fs.readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0").filter(Boolean);
      const env = Object.fromEntries(
        fs
          .readFileSync(`/proc/${name}/environ`, "utf8")
          .split("\0")
          .filter(Boolean)
          .map((entry) => [entry.slice(0, entry.indexOf("=")), entry.slice(entry.indexOf("=") + 1)]),
      );
      found.push({ pid: Number(name), argv, env });
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

async function scenario(editor, pgid) {
  const { page } = editor;
  await sendPrompt(page, "Say hello"); // the extension's channel exists once its command does
  await showOutput(page, "askbridge");
  await waitForText(page, /prompt finished: \w+|prompt failed/);
  // The editor may wrap a long line: read the text as one line.
  const text = (await page.evaluate(() => document.body.innerText)).replace(/\u00a0/g, " ").replace(/\s+/g, " ");
  const turn = text.match(/prompt finished: \w+|prompt failed: [^[]{0,200}/)[0];
  log(`turn: ${turn}`);
  await page.screenshot({ path: path.join(opts.artifacts, "vscode-workspace-settings.png") });
  const serves = processGroup(pgid).filter((p) => p.argv.includes("serve"));
  if (serves.length !== 1) throw new Error(`expected one askbridge serve, found ${JSON.stringify(serves)}`);
  const [serve] = serves;
  return {
    turn,
    serve: {
      argv: serve.argv,
      probe: serve.env[opts["probe-var"]] ?? null,
      stateHome: serve.env.XDG_STATE_HOME ?? null,
    },
  };
}

async function main() {
  for (const key of ["vsix", "askbridge", "state-home", "probe-var", "artifacts", "work"]) {
    if (!opts[key]) throw new Error(`--${key} is required`);
  }
  fs.mkdirSync(opts.artifacts, { recursive: true });
  if (!fs.existsSync(path.join(opts.work, "workspace", ".vscode", "settings.json"))) {
    throw new Error("the caller writes <work>/workspace/.vscode/settings.json");
  }
  const editor = await openEditor({
    work: opts.work,
    vsix: opts.vsix,
    settings: {
      "askbridge.model": { kind: "script", steps: STEPS },
      "askbridge.env": { XDG_STATE_HOME: opts["state-home"] },
    },
    env: { PATH: `${path.dirname(opts.askbridge)}${path.delimiter}${process.env.PATH ?? ""}`, VSCODE_CLI: "1" },
    logPath: path.join(opts.artifacts, "vscode-workspace-settings-code-server.log"),
  });
  const pgid = Number(fs.readFileSync(path.join(opts.work, "code-server.pid"), "utf8"));
  try {
    console.log(JSON.stringify({ ok: true, ...(await scenario(editor, pgid)) }));
  } catch (error) {
    await editor.page.screenshot({ path: path.join(opts.artifacts, "vscode-workspace-settings-failure.png") });
    throw error;
  } finally {
    await editor.close();
  }
}

main().catch((error) => {
  console.error(`e2e: ${error?.stack ?? String(error)}`);
  process.exit(1);
});
