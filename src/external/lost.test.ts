import { createSecretKey, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { AppliedMemo, newsOfLoss, vouches, type Applied } from "./memo.ts";
import { endpointLost } from "./lost.ts";
import { newExternalState } from "./deps.ts";

const PERIOD = 300_000;
const applied = (endpoint: string, verifiedAt: number): Applied => ({
  version: "uid/1//",
  hash: "h",
  endpoint,
  verifiedAt,
});
const silent = { debug() {}, info() {}, warn() {}, error() {} };

describe("an endpoint that lost what it held", () => {
  it("vouches within the period only for states confirmed since the endpoint was last found emptied", () => {
    const entry = applied("admin@a", 1_000);
    expect(vouches(entry, undefined, 1_000 + PERIOD - 1, PERIOD)).toBe(true);
    expect(vouches(entry, undefined, 1_000 + PERIOD, PERIOD)).toBe(false);
    expect(vouches(entry, 2_000, 3_000, PERIOD)).toBe(false);
    // Declared again by the pass that found the loss: it vouches again.
    expect(vouches(applied("admin@a", 2_000), 2_000, 3_000, PERIOD)).toBe(true);
  });

  it("takes a missing object as news only when it was confirmed since the last loss", () => {
    expect(newsOfLoss(applied("admin@a", 1_000), undefined)).toBe(true);
    // Confirmed before the loss: its object is being looked at already, with every other one.
    expect(newsOfLoss(applied("admin@a", 1_000), 2_000)).toBe(false);
    expect(newsOfLoss(applied("admin@a", 5_000), 2_000)).toBe(true);
  });

  it("wakes every object applied to that endpoint, and none of another", () => {
    const memo = new AppliedMemo();
    memo.set("Vhost/ns/v", applied("admin@a", 1_000));
    memo.set("Queue/ns/q", applied("admin@a", 1_500));
    memo.set("Vhost/ns/other", applied("admin@b", 1_000));
    expect(memo.endpoints()).toEqual(new Set(["admin@a", "admin@b"]));
    const state = { ...newExternalState(), applied: memo, hashKey: createSecretKey(randomBytes(32)) };
    const woken: string[] = [];
    endpointLost(
      { state, logger: silent, wake: (keys) => woken.push(...keys) },
      "admin@a",
      2_000,
      "test",
      "Queue/ns/q",
    );
    expect(woken).toEqual(["Vhost/ns/v"]);
    expect(memo.lostAt("admin@a")).toBe(2_000);
    expect(memo.lostAt("admin@b")).toBeUndefined();
  });
});
