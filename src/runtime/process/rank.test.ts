// How soon an object's pass is needed, from the object alone.
import { describe, expect, it } from "vitest";
import { rankOf } from "./rank.ts";

const object = (generation: number, status?: Record<string, unknown>, deleting = false) => ({
  metadata: { name: "o", generation, ...(deleting ? { deletionTimestamp: new Date(0) } : {}) },
  ...(status ? { status } : {}),
});
const ready = (observedGeneration: number, status = "True") => ({
  observedGeneration,
  conditions: [{ type: "Ready", status }],
});

describe("rankOf", () => {
  it("makes a check of an object converged on its current spec routine", () => {
    expect(rankOf(object(3, ready(3)))).toBe("routine");
  });

  it("makes work the object needs urgent: new, never converged, spec changed, failing, deleted, gone", () => {
    expect(rankOf(object(1))).toBe("urgent");
    expect(rankOf(object(4, ready(3)))).toBe("urgent");
    expect(rankOf(object(3, ready(3, "False")))).toBe("urgent");
    expect(rankOf(object(3, ready(3), true))).toBe("urgent");
    expect(rankOf(undefined)).toBe("urgent");
  });

  it("makes a converged object urgent when a deadline of its own status is due", () => {
    expect(rankOf(object(3, ready(3)), true)).toBe("urgent");
    expect(rankOf(object(3, ready(3)), false)).toBe("routine");
  });
});
