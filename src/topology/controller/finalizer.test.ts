import { describe, expect, it } from "vitest";
import { queueKind } from "../../api/index.ts";
import { changedBeyondOurFinalizer, finalizerName } from "./finalizer.ts";

describe("changedBeyondOurFinalizer", () => {
  const ours = finalizerName(queueKind);
  const passes = changedBeyondOurFinalizer(queueKind);
  const queue = (finalizers: string[], generation = 1, status: unknown = {}) => ({
    metadata: { name: "q", generation, finalizers, resourceVersion: String(generation) },
    spec: { name: "q" },
    status,
  });

  it("drops our own claim and others' finalizer changes while ours stays on", () => {
    expect(passes(queue([]), queue([ours]))).toBe(false);
    expect(passes(queue([ours]), queue([ours, "other"]))).toBe(false);
  });

  it("passes a finalizer change that took ours off, a spec change and a deletion", () => {
    expect(passes(queue([ours]), queue([]))).toBe(true);
    expect(passes(queue([ours]), queue([ours], 2))).toBe(true);
    const deleting = queue([ours]);
    deleting.metadata = { ...deleting.metadata, deletionTimestamp: "2026-01-01T00:00:00Z" } as never;
    expect(passes(queue([ours]), deleting)).toBe(true);
  });

  it("drops a status write", () => {
    expect(passes(queue([ours]), queue([ours], 1, { conditions: [] }))).toBe(false);
  });
});
