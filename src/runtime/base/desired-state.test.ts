import { describe, expect, it } from "vitest";
import { canonicalJson, desiredStateHash } from "./desired-state.ts";

describe("desired-state hash", () => {
  it("sorts keys at every depth and drops undefined members", () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: undefined } })).toBe(
      '{"a":{"d":[3,{"y":2,"z":1}]},"b":1}',
    );
  });

  it("is the same for the same state whatever the key order", () => {
    const a = desiredStateHash({ name: "v", tags: ["x"], limits: { connections: 5, queues: 2 } });
    const b = desiredStateHash({ limits: { queues: 2, connections: 5 }, tags: ["x"], name: "v" });
    expect(a).toBe(b);
    expect(a).toMatch(/^[0-9a-f]{64}$/);
  });

  it("changes with any value, array order, or type", () => {
    const base = desiredStateHash({ name: "v", tags: ["x", "y"], n: 1 });
    expect(desiredStateHash({ name: "v", tags: ["y", "x"], n: 1 })).not.toBe(base);
    expect(desiredStateHash({ name: "v", tags: ["x", "y"], n: "1" })).not.toBe(base);
    expect(desiredStateHash({ name: "w", tags: ["x", "y"], n: 1 })).not.toBe(base);
  });

  it("with a key is stable per key and reveals nothing without it", () => {
    const state = { username: "u", credentials: { password: "p" } };
    const key = Buffer.alloc(32, 7);
    expect(desiredStateHash(state, key)).toBe(desiredStateHash(structuredClone(state), key));
    expect(desiredStateHash(state, key)).not.toBe(desiredStateHash(state));
    expect(desiredStateHash(state, key)).not.toBe(desiredStateHash(state, Buffer.alloc(32, 8)));
  });
});
