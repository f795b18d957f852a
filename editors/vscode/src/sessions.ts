/**
 * The session commands' logic ("askbridge: New Session", "Send Prompt",
 * "Open Session…", "Cancel Turn"), independent of VS Code: `session/new`,
 * `session/list`, `session/load`, `session/prompt`, `session/cancel` and a
 * readable transcript line for each `session/update` (protocol.md "Sessions").
 *
 * A window *follows* the sessions it created or opened (M1: its client is
 * subscribed to them, so their questions and updates come to this window),
 * and every external session (an agent asking through `askbridge mcp`, X1),
 * which the host subscribes it to by itself: `notice` records one when its
 * first question or view change arrives, and `learnTitles` fetches the
 * titles ("<agent> — <cwd>") of followed sessions the window has not named
 * yet. `current` is the one "Send Prompt" and "Cancel Turn" talk to: the last
 * one created or opened, never an external session (it takes no prompts).
 * One SessionClient per window, one server connection per client; with
 * several windows on one data directory each follows its own sessions and the
 * host sends every follower the questions (M2).
 */
import { EXTERNAL_ORIGIN, Methods, SessionInfo, SessionUpdateParams } from "./protocol";
import { RpcPeer } from "./questions";

export interface NewSessionOptions {
  cwd?: string;
}

export class SessionClient {
  /** The session "Send Prompt" talks to; set by `newSession` and `load`. */
  current: string | undefined;
  private readonly following = new Map<string, SessionInfo | undefined>();

  constructor(private readonly peer: RpcPeer) {}

  /** The sessions this window follows, in the order it started following them. */
  get followed(): string[] {
    return [...this.following.keys()];
  }

  /** A short name for a followed session: its title, else its id. */
  nameOf(sessionId: string): string {
    return this.following.get(sessionId)?.title || sessionId;
  }

  /**
   * A question or view change came for `sessionId`: the host made this window
   * follow it (an external session, X1) unless the window already did. True
   * when it is new to this window.
   */
  notice(sessionId: string): boolean {
    if (this.following.has(sessionId)) return false;
    this.following.set(sessionId, undefined);
    return true;
  }

  /** Name the followed sessions that have no title yet, from `session/list`; true when one got a name. */
  async learnTitles(): Promise<boolean> {
    const unnamed = this.followed.filter((id) => !this.following.get(id));
    if (unnamed.length === 0) return false;
    let learnt = false;
    for (const session of await this.list()) {
      if (unnamed.includes(session.sessionId) && this.following.has(session.sessionId)) {
        this.following.set(session.sessionId, session);
        learnt ||= Boolean(session.title);
      }
    }
    return learnt;
  }

  async newSession(options: NewSessionOptions = {}): Promise<string> {
    const params = options.cwd ? { cwd: options.cwd } : {};
    const result = await this.peer.sendRequest<{ sessionId: string }>(Methods.sessionNew, params);
    this.following.set(result.sessionId, undefined);
    this.current = result.sessionId;
    return result.sessionId;
  }

  /** The stored root sessions, newest first (`session/list` answers oldest first). */
  async list(): Promise<SessionInfo[]> {
    const result = await this.peer.sendRequest<{ sessions?: SessionInfo[] }>(Methods.sessionList, {});
    return [...(result?.sessions ?? [])].reverse();
  }

  /**
   * `session/load`: the server resumes the session and sends its questions (the
   * first didChange carries every active entry); the window follows it from now on.
   */
  async load(session: SessionInfo | string): Promise<string> {
    const info = typeof session === "string" ? undefined : session;
    const sessionId = typeof session === "string" ? session : session.sessionId;
    const known = info ?? this.following.get(sessionId);
    const had = this.following.has(sessionId);
    // Followed from before the request: its first didChange comes before the answer (not `notice`d).
    this.following.set(sessionId, known);
    try {
      await this.peer.sendRequest<unknown>(Methods.sessionLoad, { sessionId });
    } catch (error) {
      if (!had) this.following.delete(sessionId);
      throw error;
    }
    if (known?.origin !== EXTERNAL_ORIGIN) this.current = sessionId;
    return sessionId;
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

  /** `session/cancel` for the current session: its turn ends, its open cards are withdrawn (A9). */
  async cancel(): Promise<string | undefined> {
    const sessionId = this.current;
    if (sessionId) await this.peer.sendNotification(Methods.sessionCancel, { sessionId });
    return sessionId;
  }

  /**
   * A new server connection knows none of this window's sessions: load the
   * followed ones again, so their waiting questions come back. One that cannot
   * be loaded (another data directory, gone) is no longer followed; `failed`
   * says why. `current` is not kept: the next prompt starts a session with the
   * (maybe changed) settings.
   */
  async reopen(failed: (sessionId: string, error: unknown) => void = () => undefined): Promise<string[]> {
    const previous = [...this.following];
    this.following.clear();
    this.current = undefined;
    for (const [sessionId, info] of previous) {
      try {
        await this.load(info ?? sessionId);
      } catch (error) {
        failed(sessionId, error);
      }
    }
    this.current = undefined;
    return this.followed;
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
    case "turn_ended": {
      // A failed turn is told here once (issue 18): no "Error: …" agent text comes with it.
      const ended = `[${session}] turn ${String(update.turnId)} ended: ${String(update.stopReason)}`;
      const error = (update as { error?: { message?: unknown } }).error;
      return error ? `${ended} — failed: ${String(error.message)}` : ended;
    }
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
