/**
 * The client's copy of a session's question view (V7), kept by folding the
 * changes of `userQuestions/didChange` (S2). The same rules as the reference
 * fold `askbridge.protocol.views.apply_view_changes` (test/views.test.ts
 * checks they agree):
 * - `open` appends the call to `active` with its questions (a re-ask of a call
 *   the view has moves it to the end, with the new questions);
 * - `continued` changes the entry's state in place, or appends it when it
 *   carries questions and the view lacks it (a new subscriber's first
 *   notification);
 * - `settled` moves the call to the end of `settled` with its answers;
 * - `removed` drops it from `active`.
 * A change that is not shaped like one (no callId, an unknown state, `open`
 * without questions) is skipped: one bad entry never loses the others.
 * No `vscode` import.
 */
import { ProjectionView, ViewChange } from "./protocol";

export function emptyView(): ProjectionView {
  return { active: [], settled: [] };
}

/** Fold `changes` into `view` in place (the view is the caller's private copy). */
export function foldViewChanges(view: ProjectionView, changes: readonly ViewChange[]): void {
  for (const change of changes) {
    if (!change || typeof change.callId !== "string") continue;
    const { callId, state } = change;
    const index = view.active.findIndex((entry) => entry.callId === callId);
    const questions = Array.isArray(change.questions) ? change.questions : undefined;
    if (state === "open" || (state === "continued" && index < 0 && questions)) {
      if (!questions) continue;
      if (index >= 0) view.active.splice(index, 1);
      view.active.push({ callId, questions, state });
    } else if (state === "continued") {
      if (index >= 0) view.active[index].state = "continued";
    } else if (state === "settled") {
      if (index >= 0) view.active.splice(index, 1);
      view.settled.push({ callId, answers: Array.isArray(change.answers) ? change.answers : [] });
    } else if (state === "removed") {
      if (index >= 0) view.active.splice(index, 1);
    }
  }
}
