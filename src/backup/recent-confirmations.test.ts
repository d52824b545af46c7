import { describe, expect, it } from "vitest";
import { FakeClock } from "../../harness/fakes/fake-clock.ts";
import { MemoryStore } from "../../harness/fakes/memory-store.ts";
import { recentConfirmations } from "./recent-confirmations.ts";
import { backUp, BackupError } from "./store.ts";

const path = "vhost-broker/cp/orders/o1";
const v1 = { username: "u-v1", password: "p1" };
const v2 = { username: "u-v2", password: "p2" };
const owner1 = { name: "o1", generation: "1" };
const owner2 = { name: "o1", generation: "2" };

function world(trustMs = 60_000) {
  const clock = new FakeClock();
  const inner = new MemoryStore();
  return { clock, inner, store: recentConfirmations(inner, clock, trustMs) };
}

describe("recentConfirmations", () => {
  it("lets a pass within the trust go on without reading what the last pass wrote and read back", async () => {
    const { clock, inner, store } = world();
    expect(await backUp(store, path, v1, owner1)).toEqual({ synced: true, version: 1, written: true });
    expect(inner.calls).toMatchObject({ read: 1, write: 1, confirm: 1 });
    clock.advance(59_999);
    expect(await backUp(store, path, v1, owner1)).toEqual({ synced: true, version: 1, written: false });
    expect(inner.calls).toMatchObject({ read: 1, write: 1, confirm: 1 });
  });

  it("reads again once the trust is over, and writes again what went missing meanwhile", async () => {
    const { clock, inner, store } = world();
    await backUp(store, path, v1, owner1);
    inner.paths.delete(path);
    clock.advance(60_000);
    expect(await backUp(store, path, v1, owner1)).toEqual({ synced: true, version: 1, written: true });
    expect(inner.calls).toMatchObject({ read: 2, write: 2, confirm: 2 });
    expect(inner.paths.get(path)?.data).toEqual(v1);
  });

  it("keeps its trust to its length when the wall clock steps back", async () => {
    const { clock, inner, store } = world();
    await backUp(store, path, v1, owner1);
    inner.paths.delete(path);
    clock.stepWall(-300_000);
    clock.advance(60_000);
    expect(await backUp(store, path, v1, owner1)).toEqual({ synced: true, version: 1, written: true });
    expect(inner.paths.get(path)?.data).toEqual(v1);
  });

  it("trusts a read that found the data, and writes other data without reading first", async () => {
    const { inner, store } = world();
    await inner.write(path, { password: "p1", username: "u-v1" });
    expect(await backUp(store, path, v1, owner1)).toMatchObject({ synced: true, written: false });
    expect(store.recentlySeen?.(path, { ...v1 }, owner1)).toEqual({
      version: 1,
      holds: true,
      described: true,
    });
    expect(store.recentlySeen?.(path, v2, owner2)).toEqual({ version: 1, holds: false, described: false });
    expect(await backUp(store, path, v2, owner2)).toEqual({ synced: true, version: 2, written: true });
    expect(inner.calls).toMatchObject({ read: 1, write: 2, describe: 2, confirm: 1 });
    expect(store.recentlySeen?.(path, v1, owner1)).toEqual({ version: 2, holds: false, described: false });
    expect(store.recentlySeen?.(path, v2, owner2)).toEqual({ version: 2, holds: true, described: true });
  });

  it("writes no metadata within the trust once it was written or found right", async () => {
    const { inner, store } = world();
    await backUp(store, path, v1, owner1);
    await backUp(store, path, v1, owner1);
    expect(inner.calls).toMatchObject({ write: 1, describe: 1 });
    // Another owner with the same data: the metadata alone is written, and then trusted.
    const other = { ...owner1, uid: "another" };
    await backUp(store, path, v1, other);
    await backUp(store, path, v1, other);
    expect(inner.calls).toMatchObject({ read: 1, write: 1, describe: 2 });
    expect(inner.metadata.get(path)).toEqual(other);
  });

  it("forgets a path on a failed metadata write, so the next pass reads it again", async () => {
    const { inner, store } = world();
    await backUp(store, path, v1, owner1);
    inner.describe = () => Promise.reject(new BackupError("auth-refused", "permission denied (test)", 403));
    await expect(store.describe(path, owner2)).rejects.toThrow(BackupError);
    expect(store.recentlySeen?.(path, v1, owner1)).toBeUndefined();
  });

  it("forgets a path on a purge and on a failed write", async () => {
    const { inner, store } = world();
    await backUp(store, path, v1, owner1);
    await store.purge(path);
    expect(store.recentlySeen?.(path, v1, owner1)).toBeUndefined();
    expect(await backUp(store, path, v1, owner1)).toMatchObject({ synced: true, written: true });
    inner.failure = new BackupError("failed", "the write failed (test)");
    await expect(backUp(store, path, v2, owner2)).rejects.toThrow(BackupError);
    expect(store.recentlySeen?.(path, v1, owner1)).toBeUndefined();
    expect(store.recentlySeen?.(path, v2, owner2)).toBeUndefined();
  });
});
