import { describe, expect, it } from "vitest";
import {
  BackupError,
  backUp,
  checkPath,
  confirmation,
  isStoreUnavailable,
  sameData,
  type CredentialStore,
  type StoredData,
  type StoredMetadata,
  type StoredVersion,
} from "./store.ts";

/**
 * An in-memory store that counts writes of data and of metadata, and can be told to lose a write or to
 * refuse a metadata write (as a policy without `update` on `metadata/` does).
 */
function memoryStore(options: { loseWrites?: boolean; refuseMetadata?: boolean } = {}) {
  const paths = new Map<string, StoredVersion>();
  const described = new Map<string, StoredMetadata>();
  let writes = 0;
  let metadataWrites = 0;
  const store: CredentialStore = {
    async write(path, data) {
      writes++;
      const version = (paths.get(path)?.version ?? 0) + 1;
      if (!options.loseWrites) paths.set(path, { version, data: { ...data } });
      return { version, metadata: described.get(path) ?? {} };
    },
    async describe(path, metadata) {
      metadataWrites++;
      if (options.refuseMetadata) throw new BackupError("auth-refused", "permission denied (test)", 403);
      described.set(path, { ...metadata });
    },
    async read(path) {
      const found = paths.get(path);
      return found && { ...found, metadata: described.get(path) ?? {} };
    },
    async confirm(path, expected) {
      return confirmation(expected, paths.get(path));
    },
    async purge(path) {
      paths.delete(path);
    },
    async health() {
      return { ready: true, state: "ready" };
    },
  };
  return { store, described, writes: () => writes, metadataWrites: () => metadataWrites };
}

const data: StoredData = { username: "u", password: "p" };
const owner: StoredMetadata = { kind: "RabbitMQVhost", name: "o", generation: "1" };

describe("backUp", () => {
  it("writes new data once and then leaves it alone", async () => {
    const { store, writes } = memoryStore();
    expect(await backUp(store, "a/b", data, owner)).toEqual({ synced: true, version: 1, written: true });
    expect(await backUp(store, "a/b", { ...data }, owner)).toEqual({
      synced: true,
      version: 1,
      written: false,
    });
    expect(writes()).toBe(1);
    expect(await backUp(store, "a/b", { ...data, password: "q" }, owner)).toEqual({
      synced: true,
      version: 2,
      written: true,
    });
  });

  it("is not synced when the read-back does not confirm the write", async () => {
    const { store } = memoryStore({ loseWrites: true });
    expect(await backUp(store, "a/b", data, owner)).toEqual({ synced: false, reason: "missing" });
  });

  it("writes the metadata with a new path and a new generation, and not when it is right", async () => {
    const { store, described, metadataWrites } = memoryStore();
    await backUp(store, "a/b", data, owner);
    expect(described.get("a/b")).toEqual(owner);
    await backUp(store, "a/b", data, { ...owner });
    expect(metadataWrites()).toBe(1);
    const next = { ...owner, generation: "2" };
    await backUp(store, "a/b", { ...data, password: "q" }, next);
    expect(described.get("a/b")).toEqual(next);
    expect(metadataWrites()).toBe(2);
  });

  it("writes only the metadata when the data is right and the owner is not", async () => {
    const { store, described, writes, metadataWrites } = memoryStore();
    await store.write("a/b", data);
    expect(await backUp(store, "a/b", data, owner)).toEqual({ synced: true, version: 1, written: false });
    expect([writes(), metadataWrites()]).toEqual([1, 1]);
    expect(described.get("a/b")).toEqual(owner);
  });

  it("backs the data up when the metadata write is refused, and tries the metadata again next time", async () => {
    const { store, metadataWrites } = memoryStore({ refuseMetadata: true });
    expect(await backUp(store, "a/b", data, owner)).toEqual({ synced: true, version: 1, written: true });
    expect(await backUp(store, "a/b", data, owner)).toEqual({ synced: true, version: 1, written: false });
    expect(metadataWrites()).toBe(2);
  });

  it("throws what is not the store's own failure", async () => {
    const { store } = memoryStore();
    store.describe = () => Promise.reject(new TypeError("a bug"));
    await expect(backUp(store, "a/b", data, owner)).rejects.toThrow(TypeError);
  });
});

describe("confirmation", () => {
  it("needs the same version and the same content, whatever the metadata", () => {
    const expected = { version: 2, data };
    expect(confirmation(expected, { version: 2, data: { password: "p", username: "u" } })).toEqual({
      confirmed: true,
    });
    expect(confirmation(expected, { version: 2, data, metadata: { name: "other" } })).toEqual({
      confirmed: true,
    });
    expect(confirmation(expected, undefined)).toEqual({ confirmed: false, reason: "missing" });
    expect(confirmation(expected, { version: 3, data })).toEqual({
      confirmed: false,
      reason: "version-mismatch",
    });
    expect(confirmation(expected, { version: 2, data: { ...data, extra: "x" } })).toEqual({
      confirmed: false,
      reason: "content-mismatch",
    });
  });

  it("compares keys and values exactly", () => {
    expect(sameData({ a: "1" }, { a: "1" })).toBe(true);
    expect(sameData({ a: "1" }, { a: "2" })).toBe(false);
    expect(sameData({ a: "1" }, { b: "1" })).toBe(false);
    expect(sameData({}, { a: "1" })).toBe(false);
  });
});

describe("checkPath", () => {
  it("accepts the backup paths of orders", () => {
    expect(checkPath("openstack/rabbitmq/openstack/workflow-cebe0e7a-vhost/credentials")).toBe(
      "openstack/rabbitmq/openstack/workflow-cebe0e7a-vhost/credentials",
    );
  });

  it.each(["", "/a", "a/", "a//b", "a/../b", "a/./b", "a b", "a?list=true", "a%2Fb"])(
    "refuses %j",
    (path) => {
      expect(() => checkPath(path)).toThrow(BackupError);
    },
  );
});

describe("isStoreUnavailable", () => {
  it("is true for the kinds that make the store unusable", () => {
    expect(isStoreUnavailable(new BackupError("unreachable", "x"))).toBe(true);
    expect(isStoreUnavailable(new BackupError("sealed", "x"))).toBe(true);
    expect(isStoreUnavailable(new BackupError("auth-refused", "x", 403))).toBe(true);
    expect(isStoreUnavailable(new BackupError("failed", "x", 500))).toBe(false);
    expect(isStoreUnavailable(new BackupError("invalid-response", "x"))).toBe(false);
    expect(isStoreUnavailable(new Error("x"))).toBe(false);
  });
});
