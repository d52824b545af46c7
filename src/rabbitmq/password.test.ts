import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { SHA256_ALGORITHM, SHA512_ALGORITHM, hashPasswordSha512, verifyPassword } from "./password.ts";

describe("salted password hashes", () => {
  it("is base64 of the 4-byte salt followed by SHA-512(salt + password)", () => {
    const salt = Buffer.from([0x90, 0x8d, 0xc6, 0x0a]);
    const hash = Buffer.from(hashPasswordSha512("test12", salt), "base64");
    expect(hash.length).toBe(4 + 64);
    expect(hash.subarray(0, 4)).toEqual(salt);
    const digest = createHash("sha512")
      .update(Buffer.concat([salt, Buffer.from("test12")]))
      .digest();
    expect(hash.subarray(4)).toEqual(digest);
  });

  it("uses a fresh salt each time, and each hash verifies", () => {
    const a = hashPasswordSha512("s3cret");
    const b = hashPasswordSha512("s3cret");
    expect(a).not.toBe(b);
    expect(verifyPassword("s3cret", a, SHA512_ALGORITHM)).toBe(true);
    expect(verifyPassword("s3cret", b, SHA512_ALGORITHM)).toBe(true);
    expect(verifyPassword("s3cret!", a, SHA512_ALGORITHM)).toBe(false);
  });

  it("verifies a SHA-256 hash", () => {
    const salt = Buffer.from([1, 2, 3, 4]);
    const digest = createHash("sha256").update(salt).update("pässwörd", "utf8").digest();
    const stored = Buffer.concat([salt, digest]).toString("base64");
    expect(verifyPassword("pässwörd", stored, SHA256_ALGORITHM)).toBe(true);
    expect(verifyPassword("passwort", stored, SHA256_ALGORITHM)).toBe(false);
    // the same bytes read as the other algorithm do not verify
    expect(verifyPassword("pässwörd", stored, SHA512_ALGORITHM)).toBe(false);
  });

  it("refuses unknown algorithms, empty and short hashes", () => {
    const hash = hashPasswordSha512("x");
    expect(verifyPassword("x", hash, "rabbit_password_hashing_md5")).toBe(false);
    expect(verifyPassword("", "", SHA512_ALGORITHM)).toBe(false);
    expect(verifyPassword("x", "AQIDBA==", SHA512_ALGORITHM)).toBe(false);
  });

  it("refuses a salt of the wrong size", () => {
    expect(() => hashPasswordSha512("x", Buffer.alloc(8))).toThrow(/4 bytes/);
  });
});
