import { describe, expect, it } from "vitest";
import type { SqlServer } from "../statements/index.ts";
import { poolKey, ServerPools, type ServerTarget } from "./pools.ts";

function opened() {
  const pools: { target: ServerTarget; closed: boolean }[] = [];
  const open = (target: ServerTarget): SqlServer => {
    const entry = { target, closed: false };
    pools.push(entry);
    return {
      run: async () => {},
      select: async () => [],
      login: async () => {},
      close: async () => void (entry.closed = true),
    };
  };
  return { pools, open };
}

const target = (over: Partial<ServerTarget> = {}): ServerTarget => ({
  source: "cp/db-admin",
  host: "db",
  port: 3306,
  username: "root",
  password: "pw-never-in-a-key",
  version: "uid/1",
  ...over,
});

describe("ServerPools", () => {
  it("keys a pool by address, account and credential version, never by the password", () => {
    expect(poolKey(target())).toBe("db:3306/root/uid/1");
    expect(poolKey(target())).not.toContain("pw-never");
  });

  it("hands out one pool per key, shared by every pass", () => {
    const { pools, open } = opened();
    const registry = new ServerPools(open, 60_000);
    expect(registry.get(target(), 0)).toBe(registry.get(target(), 1));
    expect(pools).toHaveLength(1);
  });

  it("closes a source's old pool when its credentials change", async () => {
    const { pools, open } = opened();
    const registry = new ServerPools(open, 60_000);
    registry.get(target(), 0);
    registry.get(target({ version: "uid/2", password: "rotated" }), 1);
    await Promise.resolve();
    expect(pools.map((p) => p.closed)).toEqual([true, false]);
    expect(registry.keys()).toEqual(["db:3306/root/uid/2"]);
  });

  it("keeps a pool another source still uses", () => {
    const { pools, open } = opened();
    const registry = new ServerPools(open, 60_000);
    registry.get(target({ source: "a" }), 0);
    registry.get(target({ source: "b" }), 0);
    registry.get(target({ source: "a", version: "uid/2" }), 1);
    expect(pools.map((p) => p.closed)).toEqual([false, false]);
  });

  it("closes a pool no pass asked for within the idle time", () => {
    const { pools, open } = opened();
    const registry = new ServerPools(open, 1_000);
    registry.get(target({ source: "a", host: "one" }), 0);
    registry.get(target({ source: "b", host: "two" }), 1_500);
    expect(pools.map((p) => p.closed)).toEqual([true, false]);
    expect(registry.keys()).toEqual(["two:3306/root/uid/1"]);
  });
});
