import { describe, expect, it } from "vitest";
import { matchesSelector, selectorCovers } from "./selector.ts";

describe("label selectors", () => {
  it("match equality, inequality, existence and absence", () => {
    const labels = { app: "broker", tier: "" };
    expect(matchesSelector("app=broker", labels)).toBe(true);
    expect(matchesSelector("app==broker,tier=", labels)).toBe(true);
    expect(matchesSelector("app!=broker", labels)).toBe(false);
    expect(matchesSelector("app", labels)).toBe(true);
    expect(matchesSelector("!app", labels)).toBe(false);
    expect(matchesSelector("", undefined)).toBe(true);
    expect(matchesSelector("app", undefined)).toBe(false);
  });

  it("say when a cache's selector holds every object a narrower list selects", () => {
    expect(selectorCovers("", "a=1")).toBe(true);
    expect(selectorCovers("a", "a=1,b=2")).toBe(true);
    expect(selectorCovers("a=1", "a=1,b=2")).toBe(true);
    expect(selectorCovers("a!=2", "a=1")).toBe(true);
    expect(selectorCovers("a", "b=1")).toBe(false);
    expect(selectorCovers("a=1", "a")).toBe(false);
    expect(selectorCovers("a=1", "")).toBe(false);
    expect(selectorCovers("a!=1", "a=1")).toBe(false);
  });
});
