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
  type StoredVersion,
} from "./store.ts";

/** An in-memory store that counts writes and can be told to lose a write. */
function memoryStore(options: { loseWrites?: boolean } = {}) {
  const paths = new Map<string, StoredVersion>();
  let writes = 0;
  const store: CredentialStore = {
    async write(path, data) {
      writes++;
      const version = (paths.get(path)?.version ?? 0) + 1;
      if (!options.loseWrites) paths.set(path, { version, data: { ...data } });
      return { version };
    },
    async read(path) {
      return paths.get(path);
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
  return { store, writes: () => writes };
}

const data: StoredData = { username: "u", password: "p" };

describe("backUp", () => {
  it("writes new data once and then leaves it alone", async () => {
    const { store, writes } = memoryStore();
    expect(await backUp(store, "a/b", data)).toEqual({ synced: true, version: 1, written: true });
    expect(await backUp(store, "a/b", { ...data })).toEqual({ synced: true, version: 1, written: false });
    expect(writes()).toBe(1);
    expect(await backUp(store, "a/b", { ...data, password: "q" })).toEqual({
      synced: true,
      version: 2,
      written: true,
    });
  });

  it("is not synced when the read-back does not confirm the write", async () => {
    const { store } = memoryStore({ loseWrites: true });
    expect(await backUp(store, "a/b", data)).toEqual({ synced: false, reason: "missing" });
  });
});

describe("confirmation", () => {
  it("needs the same version and the same content", () => {
    const expected = { version: 2, data };
    expect(confirmation(expected, { version: 2, data: { password: "p", username: "u" } })).toEqual({
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
