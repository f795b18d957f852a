/**
 * How the extension starts its server, from the `askbridge.*` settings; no
 * `vscode` import, so the node tests build the same launch and run it.
 *
 * - `askbridge.command` (default `["askbridge", "serve"]`): the program and its
 *   arguments. A program name without a slash is looked up on the PATH the
 *   server gets (the extension host's, or `askbridge.env`'s PATH), then in
 *   `~/.local/bin` (where pipx and `uv tool install` put it, which a
 *   desktop-started VS Code often lacks on its PATH); `~` is expanded.
 *   Relative paths — a program path, or a PATH entry such as `.` — are
 *   refused or skipped: they would let the folder VS Code opened choose the
 *   program (S20). The program is resolved here so a missing one is one clear
 *   problem, not a spawn error.
 * - `askbridge.dataDir` → `--data-dir` (absolute, or from `~`); `askbridge.model` (a ModelSpec object)
 *   → `--model <JSON>`; `askbridge.askMode` → `--ask-mode`;
 *   `askbridge.askTimeout` → `--ask-timeout`. Unset (null or empty) settings
 *   add nothing. They come after the command's own arguments, so a setting wins
 *   over the same flag in `askbridge.command` (the server takes the last one).
 * - `askbridge.env`: extra environment variables for the server (an API key
 *   named by the model's `apiKeyEnv`, `XDG_STATE_HOME`, …). Their values are
 *   never written to the output channel: `describe` names the variables only.
 *
 * A setting of the wrong shape is a problem naming that setting and what it
 * accepts; the extension shows it once and does not start the server.
 *
 * Which configuration each setting comes from (the user's only, for command,
 * env, model and dataDir) is settings.ts's job: `get` is its reader.
 */
import * as fs from "node:fs";
import * as path from "node:path";

export type SettingsGetter = (key: string) => unknown;

export interface LaunchContext {
  /** The extension host's environment (the server inherits it). */
  env: Record<string, string | undefined>;
  homedir: string;
}

export interface ServerLaunch {
  command: string;
  args: string[];
  /** The server's whole environment: the host's with `askbridge.env` over it. */
  env: Record<string, string>;
  /** For the output channel: the command line and the names (not values) of `askbridge.env`. */
  describe: string;
}

export interface LaunchProblem {
  /** The setting to change, e.g. "askbridge.command". */
  setting: string;
  /** One sentence saying what is wrong and what to set. */
  message: string;
  /** More for the output channel (the PATH searched). */
  detail?: string;
}

export const DEFAULT_COMMAND = ["askbridge", "serve"];
const ASK_TIMEOUT_MAX_SECONDS = 2147483;
const MODEL_KINDS = ["script", "openai"];
const COMMAND_EXAMPLE = '["/home/you/askbridge/.venv/bin/askbridge", "serve"]';

class Problem extends Error {
  constructor(
    readonly setting: string,
    message: string,
    readonly detail?: string,
  ) {
    super(message);
  }
}

/** The server launch the settings describe, or the problem that stops it. */
export function serverLaunch(get: SettingsGetter, context: LaunchContext): ServerLaunch | LaunchProblem {
  try {
    const extraEnv = envSetting(get("env"));
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(context.env)) if (value !== undefined) env[key] = value;
    Object.assign(env, extraEnv);
    const [program, ...args] = commandSetting(get("command"));
    const command = resolveProgram(program, env.PATH ?? "", context);
    const dataDir = optionalString(get("dataDir"), "askbridge.dataDir");
    if (dataDir) args.push("--data-dir", dataDirSetting(dataDir, context.homedir));
    const model = modelSetting(get("model"));
    if (model) args.push("--model", JSON.stringify(model));
    const askMode = optionalString(get("askMode"), "askbridge.askMode");
    if (askMode) {
      if (askMode !== "legacy" && askMode !== "timed") {
        throw new Problem(
          "askbridge.askMode",
          `askbridge.askMode must be "legacy" or "timed", not ${JSON.stringify(askMode)}.`,
        );
      }
      args.push("--ask-mode", askMode);
    }
    const timeout = timeoutSetting(get("askTimeout"));
    if (timeout !== undefined) args.push("--ask-timeout", String(timeout));
    const names = Object.keys(extraEnv);
    const describe = [command, ...args].join(" ") + (names.length ? ` (askbridge.env: ${names.join(", ")})` : "");
    return { command, args, env, describe };
  } catch (error) {
    if (error instanceof Problem) return { setting: error.setting, message: error.message, detail: error.detail };
    throw error;
  }
}

export function isLaunchProblem(launch: ServerLaunch | LaunchProblem): launch is LaunchProblem {
  return "message" in launch;
}

/** The first executable `name` in the PATH's absolute directories, then in `extraDirs`. */
export function findProgram(name: string, pathValue: string, extraDirs: string[] = []): string | undefined {
  const dirs = [...pathValue.split(path.delimiter).filter((dir) => path.isAbsolute(dir)), ...extraDirs];
  for (const dir of dirs) {
    const candidate = path.join(dir, name);
    if (isExecutableFile(candidate)) return path.resolve(candidate);
  }
  return undefined;
}

function resolveProgram(program: string, pathValue: string, context: LaunchContext): string {
  const expanded = expandHome(program, context.homedir);
  if (!expanded.includes("/")) {
    const localBin = path.join(context.homedir, ".local", "bin");
    const found = findProgram(expanded, pathValue, [localBin]);
    if (found) return found;
    throw new Problem(
      "askbridge.command",
      `"${expanded}" was not found on PATH or in ~/.local/bin. Install askbridge (for example ` +
        "`pipx install /path/to/your/askbridge/clone`), or set askbridge.command to the program's " +
        `absolute path, e.g. ${COMMAND_EXAMPLE}.`,
      `searched PATH=${pathValue} and ${localBin}`,
    );
  }
  if (!path.isAbsolute(expanded)) {
    throw new Problem(
      "askbridge.command",
      `"${program}" is a relative path, which would run whatever the open folder holds there. ` +
        `Set askbridge.command to an absolute path, e.g. ${COMMAND_EXAMPLE}.`,
    );
  }
  const absolute = expanded;
  if (!isExecutableFile(absolute)) {
    throw new Problem(
      "askbridge.command",
      `${absolute} ${fs.existsSync(absolute) ? "is not an executable file" : "does not exist"}. ` +
        `Set askbridge.command to the askbridge program, e.g. ${COMMAND_EXAMPLE}.`,
    );
  }
  return absolute;
}

function isExecutableFile(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function expandHome(value: string, homedir: string): string {
  return value.replace(/^~(?=$|\/)/, homedir);
}

function commandSetting(value: unknown): string[] {
  const words = value === undefined || value === null ? DEFAULT_COMMAND : value;
  if (!Array.isArray(words) || words.length === 0 || !words.every((w) => typeof w === "string") || !words[0]) {
    throw new Problem(
      "askbridge.command",
      `askbridge.command must be a list of strings: the program, then its arguments, e.g. ${COMMAND_EXAMPLE}.`,
    );
  }
  return [...words];
}

/** An absolute data directory: a relative one would be a directory of whichever folder is open. */
function dataDirSetting(value: string, homedir: string): string {
  const expanded = expandHome(value, homedir);
  if (!path.isAbsolute(expanded)) {
    throw new Problem(
      "askbridge.dataDir",
      `askbridge.dataDir must be an absolute path (or start with ~/), not ${JSON.stringify(value)}.`,
    );
  }
  return expanded;
}

function optionalString(value: unknown, setting: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw new Problem(setting, `${setting} must be a string.`);
  return value.trim() || undefined;
}

function envSetting(value: unknown): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value)) {
    throw new Problem(
      "askbridge.env",
      'askbridge.env must be an object of variables, e.g. {"DEEPSEEK_API_KEY": "sk-…"}.',
    );
  }
  const out: Record<string, string> = {};
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    if (typeof item !== "string") {
      throw new Problem("askbridge.env", `askbridge.env.${key} must be a string (the variable's value).`);
    }
    out[key] = item;
  }
  return out;
}

function modelSetting(value: unknown): Record<string, unknown> | undefined {
  if (value === undefined || value === null) return undefined;
  const kind = (value as { kind?: unknown }).kind;
  if (typeof value !== "object" || Array.isArray(value) || typeof kind !== "string" || !MODEL_KINDS.includes(kind)) {
    throw new Problem(
      "askbridge.model",
      'askbridge.model must be a ModelSpec object: {"kind": "openai", "model": "deepseek-chat", ' +
        '"baseUrl": "https://api.deepseek.com/v1", "apiKeyEnv": "DEEPSEEK_API_KEY"} or {"kind": "script", "steps": [...]}.',
    );
  }
  return value as Record<string, unknown>;
}

function timeoutSetting(value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (
    typeof value === "number" &&
    Number.isInteger(value) &&
    (value === -1 || (value >= 1 && value <= ASK_TIMEOUT_MAX_SECONDS))
  ) {
    return value;
  }
  throw new Problem(
    "askbridge.askTimeout",
    `askbridge.askTimeout must be -1 (wait indefinitely) or whole seconds from 1 to ${ASK_TIMEOUT_MAX_SECONDS}, not ${JSON.stringify(value)}.`,
  );
}
