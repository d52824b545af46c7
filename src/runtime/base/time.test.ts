import { afterEach, describe, expect, it } from "vitest";
import { rfc3339 } from "./time.ts";

const originalTz = process.env.TZ;

afterEach(() => {
  if (originalTz === undefined) delete process.env.TZ;
  else process.env.TZ = originalTz;
});

describe("rfc3339", () => {
  it("prints UTC with Z and whole seconds, dropping the milliseconds", () => {
    expect(rfc3339(Date.parse("2026-01-02T03:04:05.999Z"))).toBe("2026-01-02T03:04:05Z");
    expect(rfc3339(new Date("2026-12-31T23:59:59.001Z"))).toBe("2026-12-31T23:59:59Z");
    expect(rfc3339(0)).toBe("1970-01-01T00:00:00Z");
  });

  it("rounds down before the epoch too", () => {
    expect(rfc3339(-1)).toBe("1969-12-31T23:59:59Z");
  });

  it.each([
    // Around the spring and autumn switches, where a local offset changes within the hour.
    ["Europe/Berlin", "2026-03-29T00:30:00Z"],
    ["Europe/Berlin", "2026-03-29T01:30:00Z"],
    ["Europe/Berlin", "2026-10-25T00:30:00Z"],
    ["Europe/Berlin", "2026-10-25T01:30:00Z"],
    ["America/St_Johns", "2026-03-08T05:30:00Z"],
    ["Asia/Kathmandu", "2026-06-30T18:15:00Z"],
    ["Pacific/Kiritimati", "2026-12-31T10:00:00Z"],
  ])("prints the same in TZ=%s at %s", (tz, text) => {
    process.env.TZ = tz;
    // Proves the zone took effect, so the case cannot pass by running in UTC.
    expect(new Date(text).getTimezoneOffset()).not.toBe(0);
    expect(rfc3339(Date.parse(text) + 250)).toBe(text);
  });

  it("refuses an invalid time", () => {
    expect(() => rfc3339(Number.NaN)).toThrow(RangeError);
  });
});
