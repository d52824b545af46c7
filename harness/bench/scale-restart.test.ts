import { describe, expect, it } from "vitest";
import { median } from "./scale-restart.ts";

describe("median", () => {
  it("is the middle sample, the mean of the two middle ones for an even count, NaN for none", () => {
    expect(median([3.1, 1.2, 2.6])).toBe(2.6);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([7])).toBe(7);
    expect(median([])).toBeNaN();
  });
});
