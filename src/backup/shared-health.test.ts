import { describe, expect, it } from "vitest";
import { FakeClock } from "../../harness/fakes/fake-clock.ts";
import { sharedHealth } from "./shared-health.ts";
import type { CredentialStore, StoreHealth } from "./store.ts";

function countingStore(answers: StoreHealth[]) {
  const calls = { health: 0 };
  const store = {
    health: async () => {
      calls.health++;
      return answers.shift() ?? { ready: true, state: "ready" };
    },
  } as unknown as CredentialStore;
  return { store, calls };
}

const down: StoreHealth = { ready: false, state: "unreachable", message: "OpenBao is unreachable" };

describe("sharedHealth", () => {
  it("lets callers at the same time share one request", async () => {
    const { store, calls } = countingStore([]);
    const shared = sharedHealth(store, new FakeClock());
    const answers = await Promise.all([shared.health(), shared.health(), shared.health()]);
    expect(answers.every((a) => a.ready)).toBe(true);
    expect(calls.health).toBe(1);
  });

  it("reuses a ready answer for its window only", async () => {
    const clock = new FakeClock();
    const { store, calls } = countingStore([]);
    const shared = sharedHealth(store, clock, 1_000);
    await shared.health();
    clock.advance(999);
    expect((await shared.health()).ready).toBe(true);
    expect(calls.health).toBe(1);
    clock.advance(1);
    await shared.health();
    expect(calls.health).toBe(2);
  });

  it("never reuses an answer that the store cannot be used", async () => {
    const clock = new FakeClock();
    const { store, calls } = countingStore([down, down]);
    const shared = sharedHealth(store, clock);
    expect(await shared.health()).toEqual(down);
    expect(await shared.health()).toEqual(down);
    expect((await shared.health()).ready).toBe(true);
    expect(calls.health).toBe(3);
  });
});
