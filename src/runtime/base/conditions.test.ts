import { describe, expect, it } from "vitest";
import { conditionTransitions, mergeConditions, nextStatus, type Condition } from "./conditions.ts";

const t0 = Date.parse("2026-01-01T00:00:00Z");
const t1 = t0 + 3_600_000;
const ready: Condition = {
  type: "Ready",
  status: "True",
  reason: "Available",
  message: "ok",
  lastTransitionTime: "2026-01-01T00:00:00Z",
  observedGeneration: 1,
};

describe("nextStatus", () => {
  it("reports no change when only the clock moved", () => {
    const { status, changed } = nextStatus(
      { observedGeneration: 1, conditions: [ready] },
      { conditions: [{ type: "Ready", status: "True", reason: "Available", message: "ok" }] },
      1,
      t1,
    );
    expect(changed).toBe(false);
    expect(status.conditions?.[0]?.lastTransitionTime).toBe("2026-01-01T00:00:00Z");
  });

  it("keeps lastTransitionTime when only reason or message change, and reports the change", () => {
    const { status, changed } = nextStatus(
      { observedGeneration: 1, conditions: [ready] },
      { conditions: [{ type: "Ready", status: "True", reason: "Rotated", message: "new user" }] },
      1,
      t1,
    );
    expect(changed).toBe(true);
    expect(status.conditions?.[0]).toMatchObject({
      reason: "Rotated",
      lastTransitionTime: "2026-01-01T00:00:00Z",
    });
  });

  it("moves lastTransitionTime when the status flips", () => {
    const { status, changed } = nextStatus(
      { observedGeneration: 1, conditions: [ready] },
      { conditions: [{ type: "Ready", status: "False", reason: "BrokerDown", message: "x" }] },
      1,
      t1,
    );
    expect(changed).toBe(true);
    expect(status.conditions?.[0]?.lastTransitionTime).toBe("2026-01-01T01:00:00Z");
  });

  it("sets observedGeneration on the status and each condition, and a new generation is a change", () => {
    const { status, changed } = nextStatus(
      { observedGeneration: 1, conditions: [ready] },
      { conditions: [{ type: "Ready", status: "True", reason: "Available", message: "ok" }] },
      2,
      t1,
    );
    expect(changed).toBe(true);
    expect(status.observedGeneration).toBe(2);
    expect(status.conditions?.[0]?.observedGeneration).toBe(2);
  });

  it("sees changed or new fields besides conditions, and ignores the order of conditions", () => {
    const synced: Condition = { ...ready, type: "Synced" };
    const desired = {
      conditions: [
        { type: "Synced", status: "True" as const, reason: "Available", message: "ok" },
        { type: "Ready", status: "True" as const, reason: "Available", message: "ok" },
      ],
    };
    const stored = { observedGeneration: 1, conditions: [ready, synced] };
    expect(nextStatus(stored, desired, 1, t1).changed).toBe(false);
    expect(nextStatus(stored, { ...desired, generation: 3 }, 1, t1).changed).toBe(true);
    expect(nextStatus(undefined, desired, 1, t1).changed).toBe(true);
  });

  it("stamps a new condition with the current time in whole seconds", () => {
    const [c] = mergeConditions(
      undefined,
      [{ type: "A", status: "Unknown", reason: "R", message: "" }],
      4,
      t0 + 1234,
    );
    expect(c?.lastTransitionTime).toBe("2026-01-01T00:00:01Z");
  });
});

describe("conditionTransitions", () => {
  it("lists only conditions whose status or reason changed", () => {
    const same = { type: "Ready", status: "True" as const, reason: "Available", message: "other text" };
    expect(conditionTransitions([ready], [same])).toEqual([]);
    const flipped = { ...same, status: "False" as const, reason: "BrokerDown" };
    expect(conditionTransitions([ready], [flipped])).toEqual([{ condition: flipped, previous: ready }]);
    const newOne = { type: "Synced", status: "False" as const, reason: "Pending", message: "" };
    expect(conditionTransitions([ready], [same, newOne])).toHaveLength(1);
  });
});
