import { describe, expect, it } from "vitest";
import { ReportedOnce } from "./memo.ts";

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
