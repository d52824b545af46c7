import { describe, expect, it } from "vitest";
import { FakeClock } from "../../harness/fakes/fake-clock.ts";
import type { ManagementClient } from "./broker/index.ts";
import { BrokerChecks, definitionsLost, runBrokerChecks, stillChecked } from "./broker-checks.ts";
import { defaultControllerSettings, newControllerState } from "./deps.ts";

const silent = { debug() {}, info() {}, warn() {}, error() {} };

/** A broker whose login's stored hash is `hash.value` (undefined: it does not answer). */
function broker(endpoint: string, hash: { value: string | undefined }) {
  const asked: string[] = [];
  const client = {
    endpoint,
    username: "admin",
    find: (path: string) => {
      asked.push(path);
      return hash.value === undefined
        ? Promise.reject(new Error("broker unreachable"))
        : Promise.resolve({ password_hash: hash.value });
    },
  } as unknown as ManagementClient;
  return { client, asked };
}

function world() {
  const clock = new FakeClock();
  const state = newControllerState();
  const woken: string[] = [];
  const deps = {
    state,
    settings: { ...defaultControllerSettings, brokerCheckIntervalMs: 15_000 },
    clock,
    logger: silent,
    wake: (keys: readonly string[]) => woken.push(...keys),
  };
  const declared = (key: string, endpoint: string) =>
    state.applied.set(key, { version: "v", hash: "h", endpoint, verifiedAt: clock.monotonic() });
  return { clock, state, deps, woken, declared };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("the checks of brokers restarted empty", () => {
  it("decides from two marks read: a first or unread one decides nothing", () => {
    expect(definitionsLost(undefined, "a")).toBe(false);
    expect(definitionsLost("a", undefined)).toBe(false);
    expect(definitionsLost("a", "a")).toBe(false);
    expect(definitionsLost("a", "b")).toBe(true);
  });

  it("checks a broker while the memo holds objects of it, or for a period after a pass reached it", () => {
    expect(stillChecked(true, 0, 10 * 300_000, 300_000)).toBe(true);
    expect(stillChecked(false, 0, 300_000 - 1, 300_000)).toBe(true);
    expect(stillChecked(false, 0, 300_000, 300_000)).toBe(false);
  });

  it("wakes the objects of a broker whose definitions were made afresh, once, and no other broker's", async () => {
    const { clock, state, deps, woken, declared } = world();
    const hashA: { value: string | undefined } = { value: "salt1" };
    const a = broker("admin@a", hashA);
    const b = broker("admin@b", { value: "other" });
    // Its mark is read when a pass first reaches it, before anything is declared there.
    state.brokers.reached(deps, a.client);
    state.brokers.reached(deps, b.client);
    state.brokers.reached(deps, a.client);
    await settle();
    expect(a.asked).toEqual(["/api/users/admin"]);
    declared("Vhost/ns/v", "admin@a");
    declared("Queue/ns/q", "admin@a");
    declared("Vhost/ns/w", "admin@b");
    runBrokerChecks(deps, clock);
    clock.advance(15_000);
    await settle();
    expect(woken).toEqual([]);
    expect(a.asked).toHaveLength(2);
    // Reset: unreachable a while (nothing decided), then the login made again with a fresh salt.
    hashA.value = undefined;
    clock.advance(15_000);
    await settle();
    expect(woken).toEqual([]);
    hashA.value = "salt2";
    clock.advance(15_000);
    await settle();
    expect(woken.sort()).toEqual(["Queue/ns/q", "Vhost/ns/v"]);
    expect(state.applied.lostAt("admin@a")).toBe(clock.monotonic());
    clock.advance(15_000);
    await settle();
    expect(woken).toHaveLength(2);
    expect(a.asked).toHaveLength(5);
  });

  it("reads no mark when the checks are off", async () => {
    const { deps } = world();
    const a = broker("admin@a", { value: "salt" });
    new BrokerChecks().reached(
      { ...deps, settings: { ...deps.settings, brokerCheckIntervalMs: 0 } },
      a.client,
    );
    expect(a.asked).toEqual([]);
  });

  it("forgets a broker the memo holds nothing of a period after a pass last reached it", async () => {
    const { clock, state, deps } = world();
    const a = broker("admin@a", { value: "salt" });
    const checks = new BrokerChecks();
    checks.reached(deps, a.client);
    await settle();
    clock.advance(deps.settings.verificationPeriodMs);
    await checks.checkAll(deps);
    await checks.checkAll(deps);
    expect(a.asked).toHaveLength(1);
    expect(state.applied.size).toBe(0);
  });
});
