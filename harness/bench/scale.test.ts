// The scale phase's arithmetic: how the orders fall on the brokers, and when the rotation window opens.
import { describe, expect, it } from "vitest";
import { assignOrders, scaleIntervalMinutes, windowStart } from "./scale.ts";

describe("assignOrders", () => {
  it("spreads the orders evenly, the first brokers one more where they do not divide", () => {
    expect(assignOrders(10_000, [undefined, undefined, undefined])).toEqual([3334, 3333, 3333]);
    expect(assignOrders(30, [undefined, undefined])).toEqual([15, 15]);
  });

  it("gives a broker its count and the others the rest", () => {
    expect(assignOrders(10_000, [undefined, undefined, 1000])).toEqual([4500, 4500, 1000]);
    expect(assignOrders(10, [10, undefined])).toEqual([10, 0]);
    expect(assignOrders(10, [4, 6])).toEqual([4, 6]);
  });

  it("refuses counts that do not add up, naming the sums", () => {
    expect(() => assignOrders(10, [8, 4])).toThrow(
      "the brokers' counts add up to 12, more than the 10 orders",
    );
    expect(() => assignOrders(10, [4, 4])).toThrow("the brokers' counts add up to 8, not the 10 orders");
    expect(() => assignOrders(10, [])).toThrow("no broker");
  });
});

describe("the rotation window", () => {
  const at = (iso: string) => Date.parse(iso);

  it("opens on the first whole minute after the lead and after the last due", () => {
    // The lead decides: 12:00:30 + 90 s is 12:02:00.
    expect(windowStart(at("2026-12-06T12:00:30Z"), 90_000, at("2026-12-06T11:50:00Z"))).toBe(
      at("2026-12-06T12:02:00Z"),
    );
    // The last due decides, with 5 s to spare: 12:04:58 + 5 s rounds up to 12:06.
    expect(windowStart(at("2026-12-06T12:00:30Z"), 60_000, at("2026-12-06T12:04:58Z"))).toBe(
      at("2026-12-06T12:06:00Z"),
    );
  });

  it("keeps the interval longer than the window: no order falls due twice inside it", () => {
    for (const w of [1, 10, 120]) expect(scaleIntervalMinutes(w)).toBeGreaterThan(w);
  });
});
