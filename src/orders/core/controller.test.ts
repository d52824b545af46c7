// The order controller's word on how soon an order's pass is needed.
import { describe, expect, it } from "vitest";
import { rotationDue } from "./controller.ts";

const order = (status?: Record<string, unknown>) => ({
  metadata: { name: "o" },
  ...(status ? { status } : {}),
});
const at = Date.parse("2030-01-10T02:30:00Z");

describe("rotationDue", () => {
  it("is true once status.nextRotation has come, at its very second too", () => {
    expect(rotationDue(order({ nextRotation: "2030-01-10T02:29:59Z" }), at)).toBe(true);
    expect(rotationDue(order({ nextRotation: "2030-01-10T02:30:00Z" }), at)).toBe(true);
  });

  it("is false before it, without one, and for what is not a time", () => {
    expect(rotationDue(order({ nextRotation: "2030-01-10T02:30:01Z" }), at)).toBe(false);
    expect(rotationDue(order({}), at)).toBe(false);
    expect(rotationDue(order(), at)).toBe(false);
    expect(rotationDue(order({ nextRotation: 5 }), at)).toBe(false);
    expect(rotationDue(order({ nextRotation: "soon" }), at)).toBe(false);
  });
});
