// The real editor's lifecycle for the end-to-end tests (run.mjs, intents.mjs,
// windows.mjs, mcp.mjs): code-server from this folder's node_modules, in its
// own process group and its own user-data/extensions/XDG dirs, and Debian's
// Chromium driven by playwright-core with a fresh profile. `openEditor`
// installs the .vsix, writes the user settings, starts both and returns the
// page; `openWindow(name)` opens another window (a browser tab on its own
// workspace folder: code-server gives each window its own extension host, so
// its own `askbridge serve`); `close()` ends the browser and kills
// code-server's whole process group (which also ends every `askbridge serve`
// the extension started; the data directory's host is started detached, in its
// own session, and is the caller's to stop). code-server's pid (= its process
// group) is written to `<work>/code-server.pid`, so a caller can end the group
// even when this script was killed before its `close()`.
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

import { chromium } from "playwright-core";

const here = path.dirname(fileURLToPath(import.meta.url));

export const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

// Keep the workbench quiet: nothing that opens editors or reaches for the network.
const QUIET_SETTINGS = {
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "workbench.enableExperiments": false,
  "security.workspace.trust.enabled": false,
  "telemetry.telemetryLevel": "off",
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "update.mode": "none",
  "chat.disableAIFeatures": true,
};

export const log = (what) => console.error(`[e2e ${new Date().toISOString().slice(11, 19)}] ${what}`);

export function chromiumPath() {
  for (const candidate of ["/usr/lib/chromium/chromium", "/usr/bin/chromium"]) {
    if (fs.existsSync(candidate)) return candidate;
  }
  throw new Error("Debian's chromium is not installed (apt-get install chromium)");
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function waitHttp(url, timeoutMs, exited) {
  const start = Date.now();
  while (Date.now() - start < timeoutMs) {
    if (exited()) throw new Error("code-server exited before it served");
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`code-server did not answer ${url} within ${timeoutMs} ms`);
}

function killGroup(child, signal) {
  try {
    process.kill(-child.pid, signal);
  } catch {
    // the group is gone already
  }
}

async function stopGroup(child) {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once("exit", resolve));
    killGroup(child, "SIGTERM");
    const timer = setTimeout(() => killGroup(child, "SIGKILL"), 5000);
    await exited;
    clearTimeout(timer);
  }
  killGroup(child, "SIGKILL"); // stragglers (extension host, askbridge serve) of an exited leader
}

/**
 * Start code-server with `vsix` installed, `settings` as user settings and
 * `keybindings` as user keybindings, open `work/workspace` in Chromium.
 * `env` is added to code-server's environment (the extension host inherits it).
 * Returns {page, settings (all the user settings written), close}; the
 * code-server log goes to `logPath`.
 */
export async function openEditor({ work, vsix, settings, keybindings = [], env: extraEnv = {}, logPath }) {
  const dirs = Object.fromEntries(
    ["user-data", "extensions", "workspace", "browser-profile", "xdg-config", "xdg-data"].map((name) => [
      name,
      path.join(work, name),
    ]),
  );
  for (const dir of Object.values(dirs)) fs.mkdirSync(dir, { recursive: true });
  const codeServer = path.join(here, "node_modules", ".bin", "code-server");
  if (!fs.existsSync(codeServer)) throw new Error(`${codeServer} is missing: run scripts/install-e2e.sh`);
  // code-server writes its config and state under XDG dirs: keep them out of $HOME.
  const env = { ...process.env, ...extraEnv, XDG_CONFIG_HOME: dirs["xdg-config"], XDG_DATA_HOME: dirs["xdg-data"] };
  const common = ["--user-data-dir", dirs["user-data"], "--extensions-dir", dirs.extensions];

  log("installing the .vsix");
  const install = spawnSync(codeServer, [...common, "--install-extension", vsix, "--force"], {
    env,
    encoding: "utf8",
    timeout: 120_000,
  });
  if (install.status !== 0 || !fs.readdirSync(dirs.extensions).some((name) => name.includes("askbridge"))) {
    throw new Error(`--install-extension failed (${install.status}): ${install.stdout}\n${install.stderr}`);
  }
  const userDir = path.join(dirs["user-data"], "User");
  fs.mkdirSync(userDir, { recursive: true });
  const userSettings = { ...QUIET_SETTINGS, ...settings };
  fs.writeFileSync(path.join(userDir, "settings.json"), JSON.stringify(userSettings, null, 2));
  fs.writeFileSync(path.join(userDir, "keybindings.json"), JSON.stringify(keybindings, null, 2));
  fs.writeFileSync(path.join(dirs.workspace, "README.md"), "# e2e workspace\n");

  const port = await freePort();
  const configPath = path.join(work, "code-server.yaml");
  fs.writeFileSync(configPath, `bind-addr: 127.0.0.1:${port}\nauth: none\ncert: false\n`);
  log(`starting code-server on port ${port}`);
  const serverLog = fs.openSync(logPath, "w");
  const args = [
    ...common,
    "--config",
    configPath,
    "--disable-telemetry",
    "--disable-update-check",
    "--disable-workspace-trust",
    "--disable-getting-started-override",
    dirs.workspace,
  ];
  // detached: its own process group, so one kill ends code-server and everything it started.
  const server = spawn(codeServer, args, { env, detached: true, stdio: ["ignore", serverLog, serverLog] });
  const pidFile = path.join(work, "code-server.pid");
  fs.writeFileSync(pidFile, String(server.pid));
  let exited = false;
  server.once("exit", () => (exited = true));
  let context;
  const close = async () => {
    await context?.close().catch(() => undefined);
    await stopGroup(server);
    fs.closeSync(serverLog);
    fs.rmSync(pidFile, { force: true });
  };
  try {
    await waitHttp(`http://127.0.0.1:${port}/healthz`, 60_000, () => exited);
    log("launching chromium");
    context = await chromium.launchPersistentContext(dirs["browser-profile"], {
      executablePath: chromiumPath(),
      headless: true,
      args: CHROMIUM_FLAGS,
      viewport: { width: 1280, height: 800 },
    });
    const open = async (page, folder) => {
      page.setDefaultTimeout(60_000);
      await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(folder)}`);
      await page.locator(".monaco-workbench .activitybar").waitFor();
      log(`workbench loaded: ${path.basename(folder)}`);
      return page;
    };
    const page = await open(context.pages()[0] ?? (await context.newPage()), dirs.workspace);
    /** Another window on the same code-server, user settings and data directory, at `<work>/<name>`. */
    const openWindow = async (name) => {
      const folder = path.join(work, name);
      fs.mkdirSync(folder, { recursive: true });
      fs.writeFileSync(path.join(folder, "README.md"), `# ${name}\n`);
      return open(await context.newPage(), folder);
    };
    return { page, settings: userSettings, openWindow, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * Run a command from the command palette (F1) by its title. The palette lists
 * what is registered when it opens, and an extension's commands appear only
 * once the extension host has scanned it: reopen it until the command shows.
 */
export async function runCommand(page, title, timeoutMs = 60_000) {
  const start = Date.now();
  const row = page.locator(".quick-input-widget .monaco-list-row", { hasText: title.replace(/\.\.\.$/, "") }).first();
  const box = page.locator(".quick-input-widget .quick-input-box input").first();
  for (;;) {
    await page
      .locator(".monaco-workbench")
      .click({ position: { x: 640, y: 400 } })
      .catch(() => undefined);
    await page.keyboard.press("F1");
    await box.waitFor();
    await box.fill(`>${title}`);
    try {
      await row.waitFor({ timeout: 3000 });
      break;
    } catch (error) {
      if (Date.now() - start > timeoutMs) throw error;
      await page.keyboard.press("Escape");
    }
  }
  await box.press("Enter");
}

/** Wait until the page's text (Monaco renders spaces as no-break spaces) matches `pattern`. */
export async function waitForText(page, pattern, timeoutMs = 60_000) {
  await page.waitForFunction(
    (source) => new RegExp(source).test(document.body.innerText.replace(/\u00a0/g, " ")),
    pattern.source,
    { timeout: timeoutMs },
  );
}

/** Show an output channel in the panel (its last lines are then on the page). */
export async function showOutput(page, channel) {
  await runCommand(page, "Output: Show Output Channels...");
  await page
    .locator(".quick-input-widget .monaco-list-row", { hasText: new RegExp(`^${channel}$`) })
    .first()
    .click();
}

/** "askbridge: Send Prompt" with `text`. */
export async function sendPrompt(page, text) {
  await runCommand(page, "askbridge: Send Prompt");
  await page.locator(".quick-input-widget .quick-input-title", { hasText: "Send Prompt" }).waitFor();
  const input = page.locator(".quick-input-widget .quick-input-box input").first();
  await input.fill(text);
  await input.press("Enter");
  log(`prompt sent: ${text}`);
}

/**
 * Change user settings as a user does: "Preferences: Open User Settings (JSON)",
 * replace the text with `settings` (all of them, as openEditor returned them,
 * with the changes), save. (Rewriting the file behind the editor's back is not
 * picked up reliably by code-server's file watcher.)
 */
export async function editSettings(page, settings) {
  await runCommand(page, "Preferences: Open User Settings (JSON)");
  const editor = page.locator(".editor-instance .monaco-editor").first();
  await editor.waitFor();
  await editor.click();
  await page.keyboard.press("Control+A");
  // One line, inserted as typed text: no auto-indent, no auto-closed quotes.
  await page.keyboard.insertText(JSON.stringify(settings));
  await page.keyboard.press("Control+S");
}

/** Set askbridge.command and take the "askbridge settings changed" offer to restart the server. */
export async function restartWithCommand(editor, command) {
  const { page } = editor;
  await editSettings(page, { ...editor.settings, "askbridge.command": command });
  const changed = toast(page, /askbridge settings changed/);
  await changed.waitFor();
  await changed.locator(".monaco-button", { hasText: "Restart Server" }).click();
}

/** A notification toast whose text matches. */
export function toast(page, pattern) {
  return page.locator(".notifications-toasts .notification-toast", { hasText: pattern });
}

/** The message of a notification toast. */
export async function toastText(locator) {
  return (await locator.locator(".notification-list-item-message").first().innerText()).replace(/\u00a0/g, " ").trim();
}

/** The title of the QuickPick on screen, when it matches `pattern`. */
export function cardTitle(page, pattern) {
  return page.locator(".quick-input-widget .quick-input-title", { hasText: pattern });
}

/** The rows of the QuickPick on screen. */
export function cardRows(page) {
  return page.locator(".quick-input-widget .quick-input-list .monaco-list-row");
}

/** The labels of the QuickPick's rows, in order. */
export async function rowLabels(page) {
  const labels = page.locator(".quick-input-widget .quick-input-list .monaco-list-row .label-name");
  return (await labels.allInnerTexts()).map((text) => text.replace(/\u00a0/g, " ").trim());
}

/** The rendered document beside a card (a command, a plan): the webview's inner frame. */
export function documentFrame(page) {
  return page.frameLocator("iframe.webview.ready").frameLocator("#active-frame");
}
