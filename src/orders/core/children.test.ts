// The finalizers a child is applied with: the leg's, except one an object being deleted no longer has.
import { describe, expect, it } from "vitest";
import { vhostKind } from "../../api/index.ts";
import { finalizersFor } from "./children.ts";

const target = { kind: vhostKind, namespace: "cp", name: "v", finalizers: ["topology/f"] };

describe("finalizersFor", () => {
  it("sets the leg's finalizers on a new or live child, and none for a leg that names none", () => {
    expect(finalizersFor(target, undefined)).toEqual({ finalizers: ["topology/f"] });
    expect(finalizersFor(target, { metadata: { finalizers: ["other/g"] } })).toEqual({
      finalizers: ["topology/f"],
    });
    expect(finalizersFor({ ...target, finalizers: undefined }, undefined)).toEqual({});
  });

  it("keeps a finalizer a child being deleted still has, and adds none it lost (the API server refuses)", () => {
    const deleting = (finalizers: string[]) => ({
      metadata: { finalizers, deletionTimestamp: new Date("2030-01-01T00:00:00Z") },
    });
    expect(finalizersFor(target, deleting(["topology/f", "other/g"]))).toEqual({
      finalizers: ["topology/f"],
    });
    expect(finalizersFor(target, deleting(["other/g"]))).toEqual({ finalizers: [] });
  });
});
