/**
 * The client fold of `userQuestions/didChange` (src/views.ts, S2) agrees with
 * the reference fold `askbridge.protocol.views.apply_view_changes`: seeded
 * random change sequences (every state, re-asks, snapshot `continued` with
 * questions, settling unknown calls) are folded by both, batch by batch, and
 * every intermediate view must be equal. The reference runs in the project's
 * Python (`$ASKBRIDGE_PYTHON`, else `<repo>/.venv/bin/python`).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { describe, test } from "node:test";

import { ProjectionView, ViewChange } from "../src/protocol";
import { emptyView, foldViewChanges } from "../src/views";
import { PYTHON } from "./harness";

const REFERENCE = `
import json, sys
from askbridge.protocol.views import apply_view_changes, empty_view
out = []
for sequence in json.load(sys.stdin):
    view, views = empty_view(), []
    for batch in sequence:
        view = apply_view_changes(view, batch)
        views.append(view)
    out.append(views)
json.dump(out, sys.stdout)
`;

/** A small deterministic PRNG (mulberry32), so a failure names a reproducible seed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomSequence(seed: number): ViewChange[][] {
  const next = random(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)];
  const states = ["open", "continued", "settled", "removed"] as const;
  const sequence: ViewChange[][] = [];
  for (let b = 0, batches = 1 + Math.floor(next() * 8); b < batches; b++) {
    const batch: ViewChange[] = [];
    for (let c = 0, count = 1 + Math.floor(next() * 4); c < count; c++) {
      const callId = pick(["call-1", "call-2", "call-3", "call-4"]);
      const state = pick(states);
      const change: ViewChange = { callId, state };
      const questions = [{ id: "q", question: `${callId} asked at ${b}.${c}?` }];
      if (state === "open" || (state === "continued" && next() < 0.5)) change.questions = questions;
      if (state === "settled" && next() < 0.8) change.answers = [{ id: "q", selected: [`${b}.${c}`] }];
      batch.push(change);
    }
    sequence.push(batch);
  }
  return sequence;
}

function foldAll(sequence: ViewChange[][]): ProjectionView[] {
  const view = emptyView();
  return sequence.map((batch) => {
    foldViewChanges(view, batch);
    return structuredClone(view);
  });
}

describe("userQuestions/didChange fold", () => {
  test("S2: the client fold equals askbridge.protocol.views.apply_view_changes on 300 random sequences", () => {
    const seeds = Array.from({ length: 300 }, (_, i) => i + 1);
    const sequences = seeds.map(randomSequence);
    const run = spawnSync(PYTHON, ["-c", REFERENCE], { input: JSON.stringify(sequences), encoding: "utf8" });
    assert.equal(run.status, 0, run.stderr);
    const expected = JSON.parse(run.stdout) as ProjectionView[][];
    for (const [i, sequence] of sequences.entries()) {
      assert.deepEqual(foldAll(sequence), expected[i], `seed ${seeds[i]}: ${JSON.stringify(sequence)}`);
    }
  });

  test("S2: the snapshot after subscribing, then changes, then a re-ask", () => {
    const view = emptyView();
    const q = (text: string) => [{ id: "q", question: text }];
    foldViewChanges(view, [
      { callId: "a", state: "continued", questions: q("A?") },
      { callId: "b", state: "open", questions: q("B?") },
    ]);
    foldViewChanges(view, [{ callId: "b", state: "continued" }]);
    foldViewChanges(view, [{ callId: "a", state: "settled", answers: [{ id: "q", selected: [], custom: "x" }] }]);
    foldViewChanges(view, [{ callId: "b", state: "open", questions: q("B again?") }]);
    assert.deepEqual(view, {
      active: [{ callId: "b", questions: q("B again?"), state: "open" }],
      settled: [{ callId: "a", answers: [{ id: "q", selected: [], custom: "x" }] }],
    });
  });

  test("a malformed change is skipped, the others in its notification still apply", () => {
    const view = emptyView();
    const bad = [null, { state: "open" }, { callId: "x", state: "open" }, { callId: "y", state: "bogus" }];
    foldViewChanges(view, [...(bad as unknown as ViewChange[]), { callId: "ok", state: "open", questions: [] }]);
    assert.deepEqual(view, { active: [{ callId: "ok", questions: [], state: "open" }], settled: [] });
  });
});
