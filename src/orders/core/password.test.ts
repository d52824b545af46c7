import { describe, expect, it } from "vitest";
import { newPassword, PASSWORD_LENGTH } from "./password.ts";

describe("generated passwords", () => {
  const many = Array.from({ length: 2_000 }, () => newPassword());

  it("hold a digit, an upper-case and a lower-case letter and another character, every one", () => {
    for (const password of many) {
      expect(password).toHaveLength(PASSWORD_LENGTH);
      expect(password).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(password).toMatch(/[0-9]/);
      expect(password).toMatch(/[A-Z]/);
      expect(password).toMatch(/[a-z]/);
      expect(password).toMatch(/[-_]/);
    }
  });

  it("are all different, and a class is not pinned to a position", () => {
    expect(new Set(many).size).toBe(many.length);
    // Were the four classes always first, no password would start with a lower-case letter.
    expect(many.some((p) => /^[a-z]/.test(p))).toBe(true);
    expect(many.some((p) => /^[A-Z]/.test(p))).toBe(true);
    expect(many.some((p) => /[-_]$/.test(p))).toBe(true);
  });

  it("survive percent-encoding unchanged (no character a URL reserves)", () => {
    for (const password of many.slice(0, 100)) expect(encodeURIComponent(password)).toBe(password);
  });
});
