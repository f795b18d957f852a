/**
 * The server process of one connection, spawned as launch.ts describes, and
 * what it said when it could not start. No `vscode` import: the node tests
 * spawn it the same way.
 *
 * `askbridge serve` is a front door (behavior.md H2): it attaches to the data
 * directory's host, starting one when none runs. When it cannot, it writes one
 * line to stderr and exits 1 before the client's `initialize` is answered —
 * most often H7, a host of another version: "askbridge serve: the askbridge
 * host of D (pid N) is version X, this front door is Y; stop it with
 * `askbridge host --stop --data-dir D` and start again". `startupFailure()`
 * is that line (the last one it wrote; a traceback's last line is its
 * error), or "it exited with status N" when it wrote nothing, and undefined
 * when the process did not end before `started()` was called. A failed start
 * must not be restarted in a loop: the same line would come back each time.
 */
import { ChildProcess, spawn } from "node:child_process";

import { ServerLaunch } from "./launch";

/** How long to wait for the process to end once its output closed during startup. */
export const EXIT_WAIT_MS = 2000;
const STDERR_TAIL_LINES = 20;

export class ServerProcess {
  private readonly exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly tail: string[] = [];
  private partial = "";
  private running = false;
  private ended: { code: number | null; signal: NodeJS.Signals | null } | undefined;

  private constructor(readonly child: ChildProcess) {
    this.exit = new Promise((resolve) => {
      // "close", not "exit": by then stderr is read to its end, so the last line is in.
      child.once("close", (code, signal) => resolve((this.ended = { code, signal })));
      child.once("error", () => resolve((this.ended = { code: null, signal: null })));
    });
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (chunk: string) => this.collect(chunk));
  }

  static spawn(launch: Pick<ServerLaunch, "command" | "args" | "env">, cwd?: string): ServerProcess {
    return new ServerProcess(
      spawn(launch.command, launch.args, { cwd, env: launch.env, stdio: ["pipe", "pipe", "pipe"] }),
    );
  }

  /** The client's `initialize` was answered: from now on an exit is not a failed start. */
  started(): void {
    this.running = true;
  }

  /** The process has exited (or could not be spawned). */
  get exited(): boolean {
    return this.ended !== undefined;
  }

  /**
   * Why the start failed, once the process ended before `started()`; undefined
   * when it started, or is still running `waitMs` from now.
   */
  async startupFailure(waitMs = EXIT_WAIT_MS): Promise<string | undefined> {
    if (this.running) return undefined;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), waitMs)));
    const ended = await Promise.race([this.exit, timeout]);
    clearTimeout(timer);
    if (!ended || this.running) return undefined;
    const last = [...this.tail, this.partial.trim()].filter(Boolean).pop();
    if (last) return last;
    return ended.signal ? `it was ended by ${ended.signal}` : `it exited with status ${ended.code}`;
  }

  /** End the process if it still runs (a start that failed half-way, a stop that did not finish). */
  kill(): void {
    if (!this.exited) this.child.kill("SIGTERM");
  }

  private collect(chunk: string): void {
    const lines = (this.partial + chunk).split(/\r?\n/);
    this.partial = lines.pop() ?? "";
    for (const line of lines) {
      if (line.trim() === "") continue;
      this.tail.push(line.trim());
      if (this.tail.length > STDERR_TAIL_LINES) this.tail.shift();
    }
  }
}
