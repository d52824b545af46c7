import { describe, expect, it } from "vitest";
import { mergeConditions, nextStatus, notReady, ready, statusDiffers } from "./conditions.ts";
import { ReportedOnce } from "../../external/memo.ts";
import { decideOwnership } from "./ownership.ts";

const t0 = new Date("2026-01-01T00:00:00Z");
const t1 = new Date("2026-01-01T00:05:00Z");

describe("conditions", () => {
  it("keep lastTransitionTime while type and status stay, and move it on a change", () => {
    const first = mergeConditions([], [ready()], t0);
    expect(first).toEqual([{ ...ready(), lastTransitionTime: "2026-01-01T00:00:00Z" }]);
    expect(mergeConditions(first, [ready()], t1)).toEqual(first);
    const failed = mergeConditions(first, [notReady("boom")], t1);
    expect(failed[0]).toMatchObject({
      status: "False",
      message: "boom",
      lastTransitionTime: "2026-01-01T00:05:00Z",
    });
    // A new message with the same status keeps the time.
    expect(mergeConditions(failed, [notReady("again")], t0)[0]?.lastTransitionTime).toBe(
      "2026-01-01T00:05:00Z",
    );
  });

  it("set observedGeneration only on success, and a repeat pass differs in nothing", () => {
    const failed = nextStatus({ observedGeneration: 1 }, [notReady("x")], t0, undefined);
    expect(failed.observedGeneration).toBe(1);
    const ok = nextStatus(failed, [ready()], t1, { generation: 2, fields: { username: "u" } });
    expect(ok).toMatchObject({ observedGeneration: 2, username: "u" });
    expect(ok.conditions?.[0]?.message).toBeUndefined();
    expect(
      statusDiffers(ok, nextStatus(ok, [ready()], t0, { generation: 2, fields: { username: "u" } })),
    ).toBe(false);
  });
});

describe("ownership", () => {
  const lookup = {
    cluster: async () => undefined,
    secret: async () => undefined,
    service: async () => undefined,
  };
  it("matches names with or without the namespace, and connection Secrets by setting", async () => {
    const ownership = {
      enabled: true,
      clusters: { serve: "names" as const, names: ["a", "ns2/b"] },
      connectionSecrets: false,
    };
    const decide = (ref: object, ns = "ns1") => decideOwnership({ ownership, lookup }, ref, ns);
    expect(await decide({ name: "a" })).toEqual({ decision: "served" });
    expect((await decide({ name: "b" })).decision).toBe("declined");
    expect(await decide({ name: "b", namespace: "ns2" })).toEqual({ decision: "served" });
    expect((await decide({ connectionSecret: { name: "s" } })).decision).toBe("declined");
  });
  it("cannot decide by annotation without the RabbitmqCluster", async () => {
    const ownership = {
      enabled: true,
      clusters: { serve: "annotated" as const, annotation: "x" },
      connectionSecrets: true,
    };
    expect((await decideOwnership({ ownership, lookup }, { name: "a" }, "ns")).decision).toBe("undecided");
  });
});

describe("bookkeeping", () => {
  it("reports an object once, within a bounded set", () => {
    const reported = new ReportedOnce(2);
    expect([reported.first("a"), reported.first("a"), reported.first("b"), reported.first("c")]).toEqual([
      true,
      false,
      true,
      true,
    ]);
    // "a" was dropped as the oldest.
    expect(reported.first("a")).toBe(true);
  });
});
