/**
 * A server that cannot start says why (src/serverProcess.ts), and the
 * extension shows that line (extension.ts). Against the real processes:
 *
 * - H7: a host of another version runs on the data directory
 *   (test/other_version_host.py); the window's `askbridge serve` is refused
 *   and its one stderr line — naming `askbridge host --stop --data-dir D` —
 *   is the startup failure. Doing what it says (that very command) and
 *   starting again works: a host of this version starts.
 * - A front door that starts is never a failed start, even when it exits later.
 * - A process that dies without a word: its exit status; after a traceback:
 *   the traceback's last line (the error).
 */
import assert from "node:assert/strict";
import { ChildProcess, spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, test } from "node:test";

import { ServerProcess } from "../src/serverProcess";
import { ASKBRIDGE_BIN, PYTHON, startServer, stopHost, tempDataDir, waitFor } from "./harness";

const OTHER_VERSION_HOST = path.join(__dirname, "..", "..", "test", "other_version_host.py");

/** The other-version host on `dataDir`, once it answers `askbridge host --status`. */
async function otherVersionHost(dataDir: string): Promise<ChildProcess> {
  const host = spawn(PYTHON, [OTHER_VERSION_HOST, dataDir], { stdio: "ignore" });
  await waitFor("the other version's host", () => {
    const status = spawnSync(ASKBRIDGE_BIN, ["host", "--status", "--data-dir", dataDir], { encoding: "utf8" });
    return status.stdout.includes("version 0.0.0-other");
  });
  return host;
}

/** This checkout's version (`askbridge --version` prints "askbridge X"). */
const version = spawnSync(ASKBRIDGE_BIN, ["--version"], { encoding: "utf8" }).stdout.trim().split(" ").pop();

const serve = (dataDir: string) =>
  ServerProcess.spawn({
    command: ASKBRIDGE_BIN,
    args: ["serve", "--data-dir", dataDir],
    env: { ...process.env } as Record<string, string>,
  });

describe("a server that cannot start", () => {
  test("H7: a host of another version refuses the front door; its one line names the command that fixes it", async () => {
    const dataDir = tempDataDir();
    const host = await otherVersionHost(dataDir);
    const exited = new Promise((resolve) => host.once("exit", resolve));
    try {
      const failure = await serve(dataDir).startupFailure(10_000);
      // The door names itself "lsp" (its internal name) where the user ran `askbridge serve`.
      const [, prefix, rest] = /^(askbridge \w+: )(.*)$/.exec(failure ?? "") ?? [];
      assert.match(prefix ?? "", /^askbridge (serve|lsp): $/, failure);
      assert.equal(
        rest,
        `the askbridge host of ${dataDir} (pid ${host.pid}) is version 0.0.0-other, ` +
          `this front door is ${version}; stop it with \`askbridge host --stop --data-dir ${dataDir}\` and start again`,
      );
      stopHost(dataDir); // what the line says to do
      await exited;
      const server = await startServer([], {}, dataDir); // "Restart Server": a host of this version
      assert.equal(await server.process.startupFailure(100), undefined);
      await server.stop();
    } finally {
      host.kill("SIGKILL");
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test("a front door that started is not a failed start, also once it exited", async () => {
    const server = await startServer([]);
    assert.equal(await server.process.startupFailure(100), undefined, "running");
    await server.stop();
    assert.equal(server.process.exited, true);
    assert.equal(await server.process.startupFailure(100), undefined, "exited after it started");
  });

  test("a process that ends without a word gives its exit status; after a traceback, its last line", async () => {
    const silent = ServerProcess.spawn({ command: "/bin/sh", args: ["-c", "exit 3"], env: {} });
    assert.equal(await silent.startupFailure(), "it exited with status 3");
    const script = 'printf "Traceback (most recent call last):\\n  File x\\nValueError: boom\\n\\n" >&2; exit 1';
    const traceback = ServerProcess.spawn({ command: "/bin/sh", args: ["-c", script], env: {} });
    assert.equal(await traceback.startupFailure(), "ValueError: boom");
  });
});
