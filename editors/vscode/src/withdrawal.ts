/**
 * What to tell the user when the server withdraws a card that was on screen
 * (`$/cancelRequest` for a `userQuestions/ask`, behavior.md A9, M2). With
 * several windows on one data directory every follower of a session gets its
 * questions; the first answer wins and the other windows' cards close. The
 * card closing is not news the user can act on unless it says why, and the
 * view says it: the withdrawal comes first, then the session's
 * `userQuestions/didChange` shows where the question went —
 *
 * - `settled`: another window (or client) answered it → "answered in another window";
 * - `continued`: the agent stopped waiting — its time ran out (the
 *   deadline, another window's countdown, TW6/TW7) or an MCP agent went
 *   away (X6) → it is under Waiting Questions, still answerable;
 * - gone from the view (`removed`): the turn was cancelled, or the question
 *   was dismissed in another window → the agent no longer needs it;
 * - an ask the view does not track (a blocking or approval ask without a
 *   call id), or no change within `WITHDRAWAL_WAIT_MS`: the general sentence.
 *
 * No `vscode` import.
 */
import { questionsLabel } from "./continued";
import { AskParams, ProjectionView } from "./protocol";

export const WITHDRAWAL_WAIT_MS = 2000;

export type WithdrawalReason = "answered" | "continued" | "removed" | "unknown";

/** What `withdrawalReason` reads: a session's folded view, and news of any change. */
export interface ViewSource {
  view(sessionId: string): ProjectionView | undefined;
  onDidChange(listener: () => void): { dispose(): unknown };
}

type EntryState = "open" | "continued" | "settled" | "absent";

function entryState(view: ProjectionView | undefined, callId: string): EntryState {
  const active = view?.active?.find((entry) => entry.callId === callId);
  if (active) return active.state;
  return view?.settled?.some((entry) => entry.callId === callId) ? "settled" : "absent";
}

const REASONS: Record<Exclude<EntryState, "open">, WithdrawalReason> = {
  settled: "answered",
  continued: "continued",
  absent: "removed",
};

/** Why the ask was withdrawn, from the view once it moved on (at most `waitMs` from now). */
export function withdrawalReason(
  params: AskParams,
  views: ViewSource,
  waitMs = WITHDRAWAL_WAIT_MS,
): Promise<WithdrawalReason> {
  const callId = params.wait?.callId;
  if (!callId) return Promise.resolve("unknown");
  const settledState = (): WithdrawalReason | undefined => {
    const state = entryState(views.view(params.sessionId), callId);
    return state === "open" ? undefined : REASONS[state];
  };
  const now = settledState();
  if (now) return Promise.resolve(now);
  return new Promise((resolve) => {
    const finish = (reason: WithdrawalReason) => {
      clearTimeout(timer);
      subscription.dispose();
      resolve(reason);
    };
    const timer = setTimeout(() => finish("unknown"), waitMs);
    const subscription = views.onDidChange(() => {
      const reason = settledState();
      if (reason) finish(reason);
    });
  });
}

/** The notification: which question closed, and why. */
export function withdrawalMessage(params: AskParams, reason: WithdrawalReason): string {
  const label = `askbridge: "${questionsLabel(params.questions ?? [])}"`;
  switch (reason) {
    case "answered":
      return `${label} was answered in another window; its card here was closed.`;
    case "continued":
      return `${label} was closed: the agent stopped waiting (its time ran out, or it went away). It is under Waiting Questions, where you can still answer it.`;
    case "removed":
      return `${label} was closed: the agent no longer needs this answer (the turn was cancelled, or the question was dismissed in another window).`;
    default:
      return `${label} was closed: the agent no longer waits for this answer (another window may have answered it, or the turn was cancelled).`;
  }
}
