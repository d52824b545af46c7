import { describe, expect, it } from "vitest";
import { scrub } from "./redact.ts";

describe("scrub", () => {
  it("replaces every occurrence of each secret", () => {
    expect(scrub("token abcd1234 and abcd1234, pw s3cr3t", ["abcd1234", "s3cr3t", undefined])).toBe(
      "token [redacted] and [redacted], pw [redacted]",
    );
  });

  it("removes a short secret too, and a secret that contains another whole", () => {
    expect(scrub("pw abc in abcdef", ["abc", "abcdef", ""])).toBe("pw [redacted] in [redacted]");
  });
});
