// The OpenBao backup against the local OpenBao: each behaviour is checked through the store and, where
// it matters, through OpenBao's own HTTP API, so that the store cannot vouch for itself.
import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { openBaoStore } from "../../src/backup/openbao.ts";
import { BackupError, backUp, isStoreUnavailable } from "../../src/backup/store.ts";
import { localEnv } from "../../harness/world/env.ts";
import { freePort } from "../../harness/world/ports.ts";
import { credentials, everything, failure, owner, password } from "./fixtures.ts";

const env = localEnv();
const prefix = `itest/backup-${randomBytes(4).toString("hex")}`;
const store = openBaoStore({
  address: env.BAO_ADDR,
  auth: { method: "token", token: env.BAO_TOKEN },
  mount: "kv-v2",
  timeoutMs: 5_000,
});

/** OpenBao's own view of a KV v2 path, read with plain fetch. */
async function raw(area: "data" | "metadata", path: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${env.BAO_ADDR}/v1/kv-v2/${area}/${path}`, {
    headers: { "X-Vault-Token": env.BAO_TOKEN },
  });
  return { status: res.status, body: res.status === 200 ? await res.json() : undefined };
}

/** A call with the root token, as an administrator sets OpenBao up. */
async function root(method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${env.BAO_ADDR}/v1/${path}`, {
    method,
    headers: { "X-Vault-Token": env.BAO_TOKEN, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`OpenBao ${method} ${path}: HTTP ${res.status}`);
  return res.status === 204 ? undefined : await res.json();
}

afterAll(async () => {
  // Purge whatever a failed test left behind under this run's prefix.
  const res = await fetch(`${env.BAO_ADDR}/v1/kv-v2/metadata/${prefix}?list=true`, {
    headers: { "X-Vault-Token": env.BAO_TOKEN },
  });
  if (res.status !== 200) return;
  const { data } = (await res.json()) as { data: { keys: string[] } };
  for (const key of data.keys) {
    await fetch(`${env.BAO_ADDR}/v1/kv-v2/metadata/${prefix}/${key}credentials`, {
      method: "DELETE",
      headers: { "X-Vault-Token": env.BAO_TOKEN },
    });
  }
});

describe("the OpenBao credential store", () => {
  it("reports a usable OpenBao as ready", async () => {
    expect(await store.health()).toEqual({ ready: true, state: "ready" });
  });

  it("writes the six keys and reads them back", async () => {
    const path = `${prefix}/write/credentials`;
    const data = credentials(password());
    const { version } = await store.write(path, data);
    expect(version).toBe(1);
    expect(await store.read(path)).toEqual({ version: 1, data, metadata: {} });
    expect(await store.confirm(path, { version: 1, data })).toEqual({ confirmed: true });
    const stored = await raw("data", path);
    expect(stored.body).toMatchObject({ data: { data, metadata: { version: 1 } } });
    await store.purge(path);
  });

  it("creates a new version on overwrite and confirms only the new one", async () => {
    const path = `${prefix}/overwrite/credentials`;
    const first = credentials(password());
    const second = credentials(password());
    expect(await backUp(store, path, first, owner(1))).toEqual({ synced: true, version: 1, written: true });
    expect(await backUp(store, path, first, owner(1))).toEqual({ synced: true, version: 1, written: false });
    expect(await backUp(store, path, second, owner(2))).toEqual({ synced: true, version: 2, written: true });
    expect(await store.confirm(path, { version: 2, data: second })).toEqual({ confirmed: true });
    expect(await store.confirm(path, { version: 1, data: first })).toEqual({
      confirmed: false,
      reason: "version-mismatch",
    });
    expect(await store.confirm(path, { version: 2, data: first })).toEqual({
      confirmed: false,
      reason: "content-mismatch",
    });
    const metadata = await raw("metadata", path);
    expect(metadata.body).toMatchObject({ data: { current_version: 2 } });
    await store.purge(path);
  });

  it("names the owning order in the path's custom_metadata, written only when it is not right", async () => {
    const path = `${prefix}/owner/credentials`;
    const first = credentials(password());
    await backUp(store, path, first, owner(1));
    const described = await raw("metadata", path);
    expect(described.body).toMatchObject({
      data: { custom_metadata: owner(1), current_version: 1, current_metadata_version: 1 },
    });
    // Every value is a name or a number: none of the credential's.
    expect(Object.values(owner(1)).some((v) => Object.values(first).includes(v))).toBe(false);

    // A pass that finds the data and the owner right writes neither.
    await backUp(store, path, first, owner(1));
    expect(await raw("metadata", path)).toMatchObject({
      body: { data: { current_version: 1, current_metadata_version: 1 } },
    });

    // A new generation: a new version and the metadata once more, read back as OpenBao answers reads.
    const second = credentials(password());
    await backUp(store, path, second, owner(2));
    expect(await raw("data", path)).toMatchObject({
      body: { data: { data: second, metadata: { version: 2, custom_metadata: owner(2) } } },
    });
    expect(await raw("metadata", path)).toMatchObject({ body: { data: { current_metadata_version: 2 } } });
    expect(await store.read(path)).toEqual({ version: 2, data: second, metadata: owner(2) });
    await store.purge(path);
  });

  it("backs up under a policy that refuses the metadata write, which stays unwritten", async () => {
    const path = `${prefix}/no-metadata/credentials`;
    const name = `itest-no-metadata-${randomBytes(4).toString("hex")}`;
    // The policy of the earlier install page: `delete` alone on metadata/.
    await root("PUT", `sys/policies/acl/${name}`, {
      policy: [
        `path "kv-v2/data/${prefix}/*" { capabilities = ["create", "update", "read"] }`,
        `path "kv-v2/metadata/${prefix}/*" { capabilities = ["delete"] }`,
      ].join("\n"),
    });
    try {
      const created = (await root("POST", "auth/token/create", { policies: [name], ttl: "5m" })) as {
        auth: { client_token: string };
      };
      const limited = openBaoStore({
        address: env.BAO_ADDR,
        auth: { method: "token", token: created.auth.client_token },
        mount: "kv-v2",
        timeoutMs: 5_000,
      });
      const data = credentials(password());
      expect(await backUp(limited, path, data, owner())).toEqual({ synced: true, version: 1, written: true });
      const refused = await failure(limited.describe(path, owner()));
      expect(refused).toMatchObject({ kind: "auth-refused", status: 403 });
      expect(everything(refused)).not.toContain(created.auth.client_token);
      expect(await raw("metadata", path)).toMatchObject({ body: { data: { custom_metadata: null } } });
      await limited.purge(path);
    } finally {
      await root("DELETE", `sys/policies/acl/${name}`);
    }
  });

  it("purges the data, every version and the metadata", async () => {
    const path = `${prefix}/purge/credentials`;
    await store.write(path, credentials(password()));
    await store.write(path, credentials(password()));
    await store.purge(path);
    expect(await store.read(path)).toBeUndefined();
    expect(await store.confirm(path, { version: 2, data: credentials("x") })).toEqual({
      confirmed: false,
      reason: "missing",
    });
    expect((await raw("data", path)).status).toBe(404);
    expect((await raw("metadata", path)).status).toBe(404);
    await expect(store.purge(path)).resolves.toBeUndefined();
  });

  it("refuses a path that could reach beyond itself", async () => {
    await expect(store.purge(`${prefix}/../other`)).rejects.toThrow(/is not a valid secret store path/);
    await expect(store.read("")).rejects.toThrow(BackupError);
  });
});

describe("an OpenBao that cannot be used", () => {
  const wrongToken = `hvs.wrong-${randomBytes(12).toString("hex")}`;
  const secret = password();

  it("reports a refused token as auth-refused, without the token or the password", async () => {
    const refused = openBaoStore({
      address: env.BAO_ADDR,
      auth: { method: "token", token: wrongToken },
      mount: "kv-v2",
      timeoutMs: 5_000,
    });
    const health = await refused.health();
    expect(health).toMatchObject({ ready: false, state: "auth-refused" });
    expect(JSON.stringify(health)).not.toContain(wrongToken);

    const err = await failure(refused.write(`${prefix}/refused/credentials`, credentials(secret)));
    expect(err).toBeInstanceOf(BackupError);
    expect(err).toMatchObject({ kind: "auth-refused", status: 403 });
    expect(isStoreUnavailable(err)).toBe(true);
    expect(everything(err)).not.toContain(wrongToken);
    expect(everything(err)).not.toContain(secret);
    expect((await raw("metadata", `${prefix}/refused/credentials`)).status).toBe(404);
  });

  it("reports a closed port as unreachable, without the token or the password", async () => {
    // A port nothing listens on any more.
    const port = await freePort();
    const closed = openBaoStore({
      address: `http://127.0.0.1:${port}`,
      auth: { method: "token", token: env.BAO_TOKEN },
      mount: "kv-v2",
      timeoutMs: 5_000,
    });
    const health = await closed.health();
    expect(health).toEqual({
      ready: false,
      state: "unreachable",
      message: `OpenBao at http://127.0.0.1:${port} is unreachable (ECONNREFUSED) during the health check`,
    });

    const err = await failure(closed.write(`${prefix}/closed/credentials`, credentials(secret)));
    expect(err).toMatchObject({ kind: "unreachable" });
    expect(isStoreUnavailable(err)).toBe(true);
    expect(everything(err)).not.toContain(env.BAO_TOKEN);
    expect(everything(err)).not.toContain(secret);
  });
});
