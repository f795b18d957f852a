/**
 * The QuickPicks of the session and late-answer commands ("askbridge: Open
 * Session…", "askbridge: Answer a Waiting Question") and what the user is told
 * after a late answer. The question cards themselves are in vscodeUi.ts.
 */
import * as vscode from "vscode";

import { ContinuedEntry, LateAnswerOutcome } from "./continued";
import { EXTERNAL_ORIGIN, SessionInfo } from "./protocol";

/** A stored session to open: newest first, the ones this window follows marked. */
export async function pickSession(
  sessions: SessionInfo[],
  followed: ReadonlySet<string>,
): Promise<{ session: SessionInfo; name: string } | undefined> {
  const picked = await vscode.window.showQuickPick(
    sessions.map((session) => ({
      label: session.title || session.sessionId,
      description: [
        new Date(session.createdAt).toLocaleString(),
        session.origin === EXTERNAL_ORIGIN ? "an agent asking through askbridge mcp" : "",
        followed.has(session.sessionId) ? "open in this window" : "",
      ]
        .filter(Boolean)
        .join(" · "),
      detail: session.title ? session.sessionId : undefined,
      session,
    })),
    {
      title: "askbridge: Open Session",
      placeHolder: "A stored session: its waiting questions show in this window",
      matchOnDescription: true,
      matchOnDetail: true,
      ignoreFocusOut: true,
    },
  );
  return picked && { session: picked.session, name: picked.label };
}

/** Which waiting question to answer; no list when there is only one. */
export async function pickContinued(
  entries: ContinuedEntry[],
  sessionName: (sessionId: string) => string,
): Promise<ContinuedEntry | undefined> {
  if (entries.length <= 1) return entries[0];
  const picked = await vscode.window.showQuickPick(
    entries.map((entry) => ({ label: entry.label, description: sessionName(entry.sessionId), entry })),
    { title: "askbridge: questions waiting for an answer", ignoreFocusOut: true },
  );
  return picked?.entry;
}

export const LATE_ANSWER_MESSAGES: Record<LateAnswerOutcome, string | undefined> = {
  accepted: "askbridge: your answer was sent to the agent.",
  rejected: "askbridge: this question can no longer be answered.",
  queued: "askbridge: a reply to this question is already waiting for the agent.",
  dismissed: undefined,
  withdrawn: "askbridge: this question is no longer waiting (it was answered elsewhere); its card was closed.",
};
