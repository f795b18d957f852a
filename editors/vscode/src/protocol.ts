/**
 * The askbridge wire protocol v1 as the extension sees it (protocol.md): method
 * names, payload shapes (camelCase, as on the wire) and the error data a client
 * sends to end a card without an answer. Types only, plus a few constants; no
 * `vscode` import, so the node tests use it too.
 */

/** V1: `label` is both the text shown and the value the model gets back. */
export interface Option {
  label: string;
  description?: string | null;
}

export interface PlanReviewIntent {
  kind: "plan-review";
  approve: string;
  callId?: string | null;
}

export interface ApprovalIntent {
  kind: "approval";
  approve: string;
  reject: string;
  always?: string | null;
  subject?: { name: string; icon?: string | null } | null;
  /** Localized strings per locale: `{en: {question, detail, approve}, fr: {…}}`. */
  display?: Record<string, Record<string, string>> | null;
}

export type Intent = PlanReviewIntent | ApprovalIntent | { kind: string };

/** V2 */
export interface QuestionItem {
  id: string;
  question: string;
  detail?: string | null;
  header?: string | null;
  options?: Option[] | null;
  multiSelect?: boolean | null;
  intent?: Intent | null;
}

/** V4: single-select `custom` replaces the choice; multi-select `custom` may accompany `selected`. */
export interface AnswerItem {
  id: string;
  selected: string[];
  custom?: string;
}

export interface Answer {
  answers: AnswerItem[];
}

/** V5 */
export interface Wait {
  callId: string;
  timed?: boolean | null;
}

export interface AskParams {
  sessionId: string;
  agentId: string;
  questions: QuestionItem[];
  wait?: Wait | null;
}

/** V7 */
export interface ActiveQuestion {
  callId: string;
  questions: QuestionItem[];
  state: "open" | "continued";
}

export interface SettledQuestion {
  callId: string;
  answers: AnswerItem[];
}

export interface ProjectionView {
  active: ActiveQuestion[];
  settled: SettledQuestion[];
}

/**
 * One change of a session's view (protocol/README.md "userQuestions/didChange"):
 * `open` carries the questions; `continued` carries them only in the first
 * notification after subscribing; `settled` carries the answers.
 */
export interface ViewChange {
  callId: string;
  state: "open" | "continued" | "settled" | "removed";
  questions?: QuestionItem[];
  answers?: AnswerItem[];
}

/** S2: the changes since the last notification, never the whole view. */
export interface DidChangeParams {
  sessionId: string;
  changes: ViewChange[];
}

/** One entry of `session/list`: a stored root session. */
export interface SessionInfo {
  sessionId: string;
  createdAt: string;
  title?: string | null;
  /** "mcp" for an external agent's session (X1): it asks, it takes no prompts. */
  origin?: string | null;
}

export const EXTERNAL_ORIGIN = "mcp";

/** The one `$/progress` value of a claim (C3). */
export interface WaitFrame {
  remainingMs: number;
}

export interface SessionUpdateParams {
  sessionId: string;
  update: { sessionUpdate: string; [key: string]: unknown };
}

export const Methods = {
  ask: "userQuestions/ask",
  didChange: "userQuestions/didChange",
  attachWait: "userQuestions/attachWait",
  answer: "userQuestions/answer",
  withdrawReply: "userQuestions/withdrawReply",
  list: "userQuestions/list",
  sessionNew: "session/new",
  sessionLoad: "session/load",
  sessionList: "session/list",
  sessionPrompt: "session/prompt",
  sessionCancel: "session/cancel",
  sessionUpdate: "session/update",
} as const;

/** What the client declares in `capabilities.experimental` to render questions itself. */
export const USER_QUESTIONS_CAPABILITY = { userQuestions: { version: 1 } } as const;

/** Domain failures travel as JSON-RPC code -32000 with `data = {name, code}`. */
export const DOMAIN_ERROR_CODE = -32000;
/** LSP's RequestCancelled: the reply to a request the server cancelled. */
export const REQUEST_CANCELLED_CODE = -32800;

/** behavior.md "Errors": the fixed messages of the codes a client raises or meets. */
export const ErrorMessages = {
  ASK_TIMED_OUT: "ask_user_question timed out before the user answered",
  ASK_CANCELLED: "the user cancelled ask_user_question",
  REPLY_QUEUED: "a reply is already queued for this question",
} as const;

export type ClientErrorCode = "ASK_TIMED_OUT" | "ASK_CANCELLED";

/** The `data` of a domain error, when a server error carries one. */
export function domainErrorCode(error: unknown): string | undefined {
  const data = (error as { data?: unknown } | null | undefined)?.data;
  if (data && typeof data === "object" && typeof (data as { code?: unknown }).code === "string") {
    return (data as { code: string }).code;
  }
  return undefined;
}
