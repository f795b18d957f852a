/**
 * Which configuration the server launch reads each `askbridge.*` setting from
 * (behavior.md S20); no `vscode` import, so the node tests check it directly.
 *
 * The settings that start a program, give it environment, name a model
 * endpoint or choose the data directory whose `host.sock` the server sends its
 * environment to — `askbridge.command`, `askbridge.env`, `askbridge.model`,
 * `askbridge.dataDir` — are taken only from the user's own settings (VS Code's
 * `globalValue`) or their defaults. A workspace's or folder's
 * `.vscode/settings.json` is ignored for them even in a trusted workspace:
 * opening a repository must not run its program or send a key to its
 * endpoint. package.json says the same to VS Code (`"scope": "application"`,
 * and `restrictedConfigurations` for Restricted Mode); reading `inspect()` here
 * keeps it true whatever VS Code does with those declarations (VS Code itself
 * leaves such a workspace value out of `inspect()` and flags it in the
 * settings editor). `application`, not `machine`: in a remote window (code-server,
 * Remote-SSH) VS Code drops machine-scoped values of the User settings once the
 * extension's schema is known, so the user's own `askbridge.command` would
 * stop applying after the first settings change.
 * The other settings (`askMode`, `askTimeout`) only shape questions and may
 * come from a workspace.
 */

/** The keys under `askbridge.` read only from the user's configuration. */
export const USER_ONLY_SETTINGS: readonly string[] = ["command", "env", "model", "dataDir"];

/** The part of `vscode.WorkspaceConfiguration.inspect()`'s result read here. */
export interface SettingValues {
  defaultValue?: unknown;
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

/** The part of `vscode.WorkspaceConfiguration` read here. */
export interface Configuration {
  get(key: string): unknown;
  inspect(key: string): SettingValues | undefined;
}

/** The value the server launch uses for `askbridge.<key>`. */
export function launchSetting(config: Configuration, key: string): unknown {
  if (!USER_ONLY_SETTINGS.includes(key)) return config.get(key);
  const values = config.inspect(key);
  return values?.globalValue !== undefined ? values.globalValue : values?.defaultValue;
}
