// The delivered Secret's claim held against the generations' password Secrets.
import { describe, expect, it } from "vitest";
import { vouched, type DeliveredClaim } from "./evidence.ts";

const passwords = new Map([
  [1, "pw-one"],
  [2, "pw-two"],
]);
const passwordOf = (n: number) => passwords.get(n) ?? "";
const claim = (generation: number, password: string): DeliveredClaim => ({
  kind: "carries",
  generation,
  password,
});

describe("the delivered Secret's claim", () => {
  it("counts where the generation's password Secret holds the same password", () => {
    expect(vouched(claim(2, "pw-two"), passwordOf)).toEqual({ kind: "carries", generation: 2 });
    // An older copy re-applied while its generation is still in its grace period is what consumers hold.
    expect(vouched(claim(1, "pw-one"), passwordOf)).toEqual({ kind: "carries", generation: 1 });
  });

  it("is unvouched when the username was edited to another generation", () => {
    expect(vouched(claim(7, "pw-two"), passwordOf)).toEqual({ kind: "unvouched" });
    expect(vouched(claim(1, "pw-two"), passwordOf)).toEqual({ kind: "unvouched" });
  });

  it("is unvouched for a copy of a generation whose password Secret is gone", () => {
    expect(vouched(claim(3, "pw-three"), passwordOf)).toEqual({ kind: "unvouched" });
    expect(vouched(claim(3, ""), passwordOf)).toEqual({ kind: "unvouched" });
  });

  it("passes on a Secret that is absent or cannot be read", () => {
    expect(vouched({ kind: "none" }, passwordOf)).toEqual({ kind: "none" });
    expect(vouched({ kind: "unknown" }, passwordOf)).toEqual({ kind: "unknown" });
  });
});
