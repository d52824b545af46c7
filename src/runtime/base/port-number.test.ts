import { describe, expect, it } from "vitest";
import { parsePort } from "./port-number.ts";

describe("parsePort", () => {
  it("accepts 1-65535 with leading zeros as Go's ParseUint does", () => {
    expect(parsePort("5672")).toEqual({ ok: true, value: 5672 });
    expect(parsePort("05672")).toEqual({ ok: true, value: 5672 });
    expect(parsePort("000000000000000001")).toEqual({ ok: true, value: 1 });
  });

  it("refuses zero, empty and out-of-range ports", () => {
    expect(parsePort("0").ok).toBe(false);
    expect(parsePort("").ok).toBe(false);
    expect(parsePort("4294972968").ok).toBe(false);
    expect(parsePort("56e3").ok).toBe(false);
  });
});
