/**
 * An MCP agent for the node tests: the real `askbridge mcp --data-dir D` on
 * stdio, spoken to in MCP's own framing (newline-delimited JSON-RPC, as the
 * SDKs' stdio transport does): `initialize` as client `name`, `initialized`,
 * then `tools/call`s. A call may carry a progress token; `asking(id)` resolves
 * at its first `notifications/progress`, which the door sends once the
 * question is logged and asked (mcp/tools.py), so a test knows the question
 * is open before it starts a window. The Python e2e tests drive the same door
 * with the official `mcp` SDK client (tests/mcp/sdk_client.py).
 */
import { ChildProcess, spawn } from "node:child_process";
import * as readline from "node:readline";

import { ASKBRIDGE_BIN } from "./harness";

export interface ToolResult {
  content: { type: string; text: string }[];
  structuredContent?: unknown;
  isError?: boolean;
}

export class McpAgent {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve(v: any): void; reject(e: Error): void }>();
  private readonly progressSeen = new Map<number, () => void>();
  private readonly progress = new Map<number, Promise<void>>();
  stderr = "";

  private constructor(private readonly child: ChildProcess) {
    readline.createInterface({ input: child.stdout! }).on("line", (line) => this.receive(line));
    child.stderr!.on("data", (chunk) => (this.stderr += String(chunk)));
    child.once("exit", () => {
      for (const { reject } of this.pending.values()) reject(new Error(`askbridge mcp exited: ${this.stderr}`));
      this.pending.clear();
    });
  }

  static async start(dataDir: string, name: string, cwd: string): Promise<McpAgent> {
    const child = spawn(ASKBRIDGE_BIN, ["mcp", "--data-dir", dataDir], { cwd, stdio: ["pipe", "pipe", "pipe"] });
    const agent = new McpAgent(child);
    await agent.request("initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name, version: "1.0" },
    });
    agent.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    return agent;
  }

  /** `tools/call`; its request id is the progress token, for `asking`. */
  callTool(name: string, args: unknown): { id: number; result: Promise<ToolResult> } {
    const id = this.nextId;
    this.progress.set(id, new Promise((resolve) => this.progressSeen.set(id, resolve)));
    const result = this.request("tools/call", { name, arguments: args, _meta: { progressToken: id } });
    return { id, result };
  }

  /** Resolves once the call's question is asked (its first progress notification). */
  asking(id: number): Promise<void> {
    return this.progress.get(id)!;
  }

  /** End the connection (end of input), as an agent's process going away does (X6). */
  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once("exit", resolve));
    this.child.stdin!.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(timer);
  }

  private request(method: string, params: unknown): Promise<any> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.send({ jsonrpc: "2.0", id, method, params });
    });
  }

  private send(message: unknown): void {
    this.child.stdin!.write(JSON.stringify(message) + "\n");
  }

  private receive(line: string): void {
    if (!line.trim()) return;
    const message = JSON.parse(line);
    if (message.method === "notifications/progress") {
      this.progressSeen.get(message.params?.progressToken)?.();
    } else if (message.id !== undefined && message.method === undefined) {
      const waiter = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.error) waiter?.reject(new Error(`${message.error.code}: ${message.error.message}`));
      else waiter?.resolve(message.result);
    } else if (message.id !== undefined && message.method === "ping") {
      this.send({ jsonrpc: "2.0", id: message.id, result: {} });
    } else if (message.id !== undefined) {
      // Another request from the server (elicitation, roots): this agent declares none of them.
      this.send({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "not supported" } });
    }
  }
}
