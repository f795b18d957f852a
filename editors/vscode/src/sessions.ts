/**
 * The session commands' logic ("askbridge: New Session", "askbridge: Send
 * Prompt"), independent of VS Code: `session/new`, `session/prompt` and a
 * readable transcript line for each `session/update` (protocol.md "Sessions").
 */
import { Methods, SessionUpdateParams } from "./protocol";
import { RpcPeer } from "./questions";

export interface NewSessionOptions {
  cwd?: string;
}

export class SessionClient {
  /** The session "Send Prompt" talks to; set by `newSession`. */
  current: string | undefined;

  constructor(private readonly peer: RpcPeer) {}

  async newSession(options: NewSessionOptions = {}): Promise<string> {
    const params = options.cwd ? { cwd: options.cwd } : {};
    const result = await this.peer.sendRequest<{ sessionId: string }>(Methods.sessionNew, params);
    this.current = result.sessionId;
    return result.sessionId;
  }

  /** Send a prompt to the current session (creating one first if needed); resolves with the stop reason. */
  async prompt(text: string, options: NewSessionOptions = {}): Promise<{ sessionId: string; stopReason: string }> {
    const sessionId = this.current ?? (await this.newSession(options));
    const result = await this.peer.sendRequest<{ stopReason: string }>(Methods.sessionPrompt, {
      sessionId,
      prompt: [{ type: "text", text }],
    });
    return { sessionId, stopReason: result.stopReason };
  }

  forget(): void {
    this.current = undefined;
  }
}

/** One line for the output channel, or undefined for updates not worth a line. */
export function describeUpdate(params: SessionUpdateParams): string | undefined {
  const update = params?.update;
  if (!update) return undefined;
  const session = params.sessionId;
  switch (update.sessionUpdate) {
    case "turn_started":
      return `[${session}] turn ${String(update.turnId)} started (${String(update.cause)})`;
    case "agent_message_chunk":
      return `[${session}] agent: ${textOf(update.content)}`;
    case "user_message":
      return `[${session}] user: ${textOf(update.content)}`;
    case "tool_call":
      return `[${session}] tool ${String(update.title)} (${String(update.toolCallId)})`;
    case "tool_call_update":
      return `[${session}] tool ${String(update.toolCallId)} ${String(update.status)}: ${textOf(update.content)}`;
    case "turn_ended":
      return `[${session}] turn ${String(update.turnId)} ended: ${String(update.stopReason)}`;
    default:
      return undefined;
  }
}

/** The text of a content block, a list of blocks, or tool-call content (`{type: "content", content}`). */
export function textOf(content: unknown): string {
  if (Array.isArray(content)) return content.map(textOf).join("");
  if (content && typeof content === "object") {
    const block = content as { text?: unknown; content?: unknown };
    if (typeof block.text === "string") return block.text;
    if (block.content !== undefined) return textOf(block.content);
  }
  return "";
}
