import { describe, expect, it } from "vitest";
import { scrub } from "./redact.ts";

describe("scrub", () => {
  it("replaces every occurrence of each secret", () => {
    expect(scrub("token abcd1234 and abcd1234, pw s3cr3t", ["abcd1234", "s3cr3t", undefined])).toBe(
      "token [redacted] and [redacted], pw [redacted]",
    );
  });

  it("ignores secrets too short to mean anything", () => {
    expect(scrub("a port 56", ["5", ""])).toBe("a port 56");
  });
});
