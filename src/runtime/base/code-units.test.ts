import { describe, expect, it } from "vitest";
import { byCodeUnits } from "./code-units.ts";

describe("byCodeUnits", () => {
  it("orders by UTF-16 code units: capitals before small letters, a prefix first", () => {
    expect(["b", "Ready", "a", "B", "DeliveryReady", "Read"].sort(byCodeUnits)).toEqual([
      "B",
      "DeliveryReady",
      "Read",
      "Ready",
      "a",
      "b",
    ]);
    expect(byCodeUnits("Ready", "Ready")).toBe(0);
  });
});
