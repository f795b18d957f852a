/**
 * The server launch from the settings (src/launch.ts, issue 13 item 12):
 * `askbridge` found on PATH (then ~/.local/bin) by default, one clear problem
 * naming the setting when it is missing or a setting has the wrong shape, and
 * `askbridge.env`, `askbridge.model`, `askbridge.askMode`,
 * `askbridge.askTimeout` and `askbridge.dataDir` reaching the real
 * `askbridge serve`: its session header records the model and the ask
 * settings (read back from the store after the server is gone), and the
 * model's API key comes from `askbridge.env`.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, test } from "node:test";

import {
  LaunchContext,
  LaunchProblem,
  ServerLaunch,
  SettingsGetter,
  findProgram,
  isLaunchProblem,
  serverLaunch,
} from "../src/launch";
import { Configuration, SettingValues, USER_ONLY_SETTINGS, launchSetting } from "../src/settings";
import { ASKBRIDGE_BIN, startLaunch, storedEvents, tempDataDir } from "./harness";

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "askbridge-vscode-launch-"));
after(() => fs.rmSync(scratch, { recursive: true, force: true }));

function dir(...parts: string[]): string {
  const d = path.join(scratch, ...parts);
  fs.mkdirSync(d, { recursive: true });
  return d;
}

function program(where: string, name = "askbridge", mode = 0o755): string {
  const file = path.join(where, name);
  fs.writeFileSync(file, "#!/bin/sh\n");
  fs.chmodSync(file, mode);
  return file;
}

function settings(values: Record<string, unknown>): SettingsGetter {
  return (key) => values[key];
}

function context(extra: Partial<LaunchContext> = {}): LaunchContext {
  return { env: { PATH: "" }, homedir: dir("empty-home"), ...extra };
}

function ok(launch: ServerLaunch | LaunchProblem): ServerLaunch {
  if (isLaunchProblem(launch)) throw new Error(`unexpected problem: ${launch.message}`);
  return launch;
}

function problem(launch: ServerLaunch | LaunchProblem): LaunchProblem {
  if (!isLaunchProblem(launch)) throw new Error(`expected a problem, got ${launch.describe}`);
  return launch;
}

describe("finding the server program", () => {
  test("the default command is the first executable askbridge on PATH; files that cannot run are skipped", () => {
    const notExecutable = dir("path-a");
    program(notExecutable, "askbridge", 0o644);
    const aDirectory = dir("path-b");
    fs.mkdirSync(path.join(aDirectory, "askbridge"), { recursive: true });
    const good = program(dir("path-c"));
    program(dir("path-d")); // a later one loses
    const PATH = [notExecutable, aDirectory, dir("path-c"), dir("path-d")].join(":");
    const launch = ok(serverLaunch(settings({}), context({ env: { PATH } })));
    assert.equal(launch.command, good);
    assert.deepEqual(launch.args, ["serve"]);
    assert.equal(findProgram("askbridge", `${notExecutable}:${aDirectory}`), undefined);
  });

  test("~/.local/bin (pipx, uv tool) is tried after PATH; askbridge.env's PATH is the one searched", () => {
    const home = dir("home-with-local-bin");
    const local = program(dir("home-with-local-bin", ".local", "bin"));
    assert.equal(ok(serverLaunch(settings({}), context({ homedir: home }))).command, local);
    const fromEnv = program(dir("env-path"));
    const launch = ok(serverLaunch(settings({ env: { PATH: dir("env-path") } }), context({ homedir: home })));
    assert.equal(launch.command, fromEnv);
    assert.equal(launch.env.PATH, dir("env-path"), "the server gets askbridge.env's PATH too");
  });

  test("not found: one problem naming askbridge.command, how to install and an absolute-path example", () => {
    const found = problem(serverLaunch(settings({}), context()));
    assert.equal(found.setting, "askbridge.command");
    assert.match(found.message, /^"askbridge" was not found on PATH or in ~\/\.local\/bin\. Install askbridge/);
    assert.match(found.message, /set askbridge\.command to the program's absolute path, e\.g\. \["\/home\/you\//);
    assert.match(found.detail ?? "", /^searched PATH= and \/.*\/empty-home\/\.local\/bin$/);
    const missing = problem(serverLaunch(settings({ command: ["/nowhere/askbridge", "serve"] }), context()));
    assert.match(missing.message, /^\/nowhere\/askbridge does not exist\. Set askbridge\.command/);
    const bad = problem(serverLaunch(settings({ command: "askbridge serve" }), context()));
    assert.match(bad.message, /^askbridge\.command must be a list of strings/);
  });

  test("~ is expanded; a relative program path or PATH entry is refused, not taken from the open folder (S20)", () => {
    const home = dir("home-tilde");
    const inHome = program(dir("home-tilde", "tools"));
    assert.equal(
      ok(serverLaunch(settings({ command: ["~/tools/askbridge"] }), context({ homedir: home }))).command,
      inHome,
    );
    const relative = problem(serverLaunch(settings({ command: [".venv/bin/askbridge", "serve"] }), context()));
    assert.equal(relative.setting, "askbridge.command");
    assert.match(relative.message, /^".venv\/bin\/askbridge" is a relative path, which would run whatever the open/);
    // A PATH entry "." or "bin" would be relative to wherever the extension host runs: skipped.
    const cwdBin = path.relative(process.cwd(), dir("relative-path-entry"));
    program(dir("relative-path-entry"));
    assert.equal(findProgram("askbridge", `.:${cwdBin}`), undefined);
    const dataDir = problem(serverLaunch(settings({ dataDir: "state" }), context({ env: { PATH: dir("path-c") } })));
    assert.equal(dataDir.setting, "askbridge.dataDir");
    assert.match(dataDir.message, /must be an absolute path \(or start with ~\/\), not "state"/);
  });
});

describe("which configuration a setting comes from (S20)", () => {
  type Values = Record<string, SettingValues>;
  const configuration = (values: Values): Configuration => ({
    get: (key) => {
      const v = values[key] ?? {};
      return v.workspaceFolderValue ?? v.workspaceValue ?? v.globalValue ?? v.defaultValue;
    },
    inspect: (key) => values[key],
  });
  const fromWorkspace = (value: unknown): SettingValues => ({ workspaceValue: value, workspaceFolderValue: value });

  test("command, env, model, dataDir: the user's value or the default; a workspace's or folder's never", () => {
    const config = configuration({
      command: { defaultValue: ["askbridge", "serve"], ...fromWorkspace(["/repo/evil.sh"]) },
      env: {
        defaultValue: {},
        globalValue: { XDG_STATE_HOME: "/home/u/state" },
        ...fromWorkspace({ LD_PRELOAD: "x" }),
      },
      model: { defaultValue: null, ...fromWorkspace({ kind: "openai", baseUrl: "http://127.0.0.1:1/v1" }) },
      dataDir: { defaultValue: "", globalValue: "/home/u/d", workspaceValue: "/repo/d" },
      askMode: { defaultValue: null, globalValue: "legacy", workspaceValue: "timed" },
    });
    assert.deepEqual(launchSetting(config, "command"), ["askbridge", "serve"]);
    assert.deepEqual(launchSetting(config, "env"), { XDG_STATE_HOME: "/home/u/state" });
    assert.equal(launchSetting(config, "model"), null);
    assert.equal(launchSetting(config, "dataDir"), "/home/u/d");
    assert.equal(launchSetting(config, "askMode"), "timed", "a question-shaping setting may come from a workspace");
  });

  test("package.json declares exactly those settings application-scoped and restricted in untrusted workspaces", () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "..", "package.json"), "utf8"));
    const properties = manifest.contributes.configuration.properties as Record<string, { scope?: string }>;
    const userOnly = USER_ONLY_SETTINGS.map((key) => `askbridge.${key}`);
    const application = Object.keys(properties).filter((name) => properties[name].scope === "application");
    assert.deepEqual(application.sort(), [...userOnly].sort());
    const trust = manifest.capabilities.untrustedWorkspaces;
    assert.equal(trust.supported, "limited");
    assert.deepEqual([...trust.restrictedConfigurations].sort(), [...userOnly].sort());
  });
});

describe("settings to flags", () => {
  const bin = dir("flags-bin");
  program(bin);
  const base = context({ env: { PATH: bin, HOME: "/home/x" }, homedir: "/home/x" });

  test("settings come after the command's own flags (the server takes the last), unset ones add nothing", () => {
    const model = { kind: "openai", model: "deepseek-chat", apiKeyEnv: "DEEPSEEK_API_KEY" };
    const launch = ok(
      serverLaunch(
        settings({
          command: ["askbridge", "serve", "--ask-mode", "legacy"],
          dataDir: "~/state",
          model,
          askMode: "timed",
          askTimeout: -1,
          env: { DEEPSEEK_API_KEY: "sk-secret" },
        }),
        base,
      ),
    );
    assert.deepEqual(launch.args, [
      "serve",
      "--ask-mode",
      "legacy",
      "--data-dir",
      "/home/x/state",
      "--model",
      JSON.stringify(model),
      "--ask-mode",
      "timed",
      "--ask-timeout",
      "-1",
    ]);
    assert.equal(launch.env.DEEPSEEK_API_KEY, "sk-secret");
    assert.equal(launch.env.HOME, "/home/x", "the host's environment is kept");
    assert.ok(launch.describe.endsWith("(askbridge.env: DEEPSEEK_API_KEY)"), launch.describe);
    assert.ok(!launch.describe.includes("sk-secret"), "a key's value never reaches the output channel");
    const plain = ok(serverLaunch(settings({ dataDir: "  ", model: null, askMode: null, askTimeout: null }), base));
    assert.deepEqual(plain.args, ["serve"]);
  });

  test("a setting of the wrong shape is a problem naming it and what it accepts", () => {
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [
        { askTimeout: 0 },
        "askbridge.askTimeout",
        /must be -1 \(wait indefinitely\) or whole seconds from 1 to 2147483, not 0/,
      ],
      [{ askTimeout: "30" }, "askbridge.askTimeout", /not "30"/],
      [{ askTimeout: 2147484 }, "askbridge.askTimeout", /not 2147484/],
      [{ askMode: "fast" }, "askbridge.askMode", /must be "legacy" or "timed", not "fast"/],
      [{ model: { model: "deepseek-chat" } }, "askbridge.model", /must be a ModelSpec object: \{"kind": "openai"/],
      [{ model: "deepseek-chat" }, "askbridge.model", /must be a ModelSpec object/],
      [{ env: { KEY: 42 } }, "askbridge.env", /askbridge\.env\.KEY must be a string/],
      [{ env: ["KEY=1"] }, "askbridge.env", /must be an object of variables/],
    ];
    for (const [values, setting, message] of cases) {
      const found = problem(serverLaunch(settings(values), base));
      assert.equal(found.setting, setting, JSON.stringify(values));
      assert.match(found.message, message);
    }
  });
});

describe("the settings reach the real askbridge serve", () => {
  const KEY_VAR = "ASKBRIDGE_VSCODE_TEST_KEY";
  const model = { kind: "openai", model: "test-model", baseUrl: "http://127.0.0.1:9/v1", apiKeyEnv: KEY_VAR };

  function launchFor(dataDir: string, env: Record<string, string>): ServerLaunch {
    const PATH = `${path.dirname(ASKBRIDGE_BIN)}:${process.env.PATH ?? ""}`;
    const values = { dataDir, env, model, askMode: "timed", askTimeout: 42 };
    const { [KEY_VAR]: _absent, ...hostEnv } = process.env;
    return ok(serverLaunch(settings(values), { env: { ...hostEnv, PATH }, homedir: os.homedir() }));
  }

  test("askbridge.model/askMode/askTimeout are in the session header; askbridge.env carries the model's key", async () => {
    const dataDir = tempDataDir();
    const launch = launchFor(dataDir, { [KEY_VAR]: "sk-from-settings" });
    assert.equal(launch.command, path.resolve(ASKBRIDGE_BIN), "the default command found askbridge on PATH");
    const server = await startLaunch(launch, dataDir);
    try {
      const sessionId = await server.sessions.newSession({ cwd: dataDir });
      const [header] = storedEvents(dataDir, sessionId); // committed before session/new answered (D1)
      assert.equal(header.type, "session/header");
      assert.deepEqual(header.model, model);
      assert.deepEqual(header.askUserQuestion, { mode: "timed", timeout: 42 });
    } finally {
      await server.stop();
    }
  });

  test("without the key in askbridge.env the same model is refused (MODEL_ERROR): the env is what carried it", async () => {
    const dataDir = tempDataDir();
    const server = await startLaunch(launchFor(dataDir, {}), dataDir);
    try {
      await assert.rejects(server.sessions.newSession(), (error: any) => error?.data?.code === "MODEL_ERROR");
    } finally {
      await server.stop();
    }
  });
});
