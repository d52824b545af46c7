import { describe, expect, it } from "vitest";
import { controlPlaneKind, secretKind } from "../../api/index.ts";
import { FakeKube } from "../../../harness/fakes/fake-kube.ts";
import type { SqlServer } from "../statements/index.ts";
import type { ServerTarget } from "./pools.ts";
import { ServerRegistry, type ServerRegistrySettings } from "./registry.ts";

const b64 = (text: string) => Buffer.from(text).toString("base64");
const PASSWORD = "admin-pw-secret";

function setUp(settings: Partial<ServerRegistrySettings> = {}) {
  const kube = new FakeKube();
  // The settings' password file: its content, or absent.
  const files = new Map<string, string>();
  const readFile = async (path: string) => {
    const content = files.get(path);
    if (content === undefined) throw Object.assign(new Error(`ENOENT: open '${path}'`), { code: "ENOENT" });
    return content;
  };
  let now = 0;
  const opened: { target: ServerTarget; closed: boolean; fail?: unknown }[] = [];
  const open = (target: ServerTarget): SqlServer => {
    const entry: (typeof opened)[number] = { target, closed: false };
    opened.push(entry);
    return {
      run: async () => {
        if (entry.fail) throw entry.fail;
      },
      select: async () => [],
      login: async () => {},
      close: async () => void (entry.closed = true),
    };
  };
  const registry = new ServerRegistry(
    {
      settingsServer: {
        host: "settings-db",
        port: 3306,
        username: "root",
        password: { value: "settings-pw" },
      },
      credentialsTtlMs: 10_000,
      idleMs: 600_000,
      ...settings,
    },
    open,
    () => now,
    readFile,
  );
  const declare = (name: string, mariadb: string, secret: string) =>
    kube.put(controlPlaneKind, {
      metadata: { namespace: "cp", name },
      spec: { infrastructure: { database: { clusterRef: { name: mariadb }, secretRef: { name: secret } } } },
    });
  const credentials = (name: string, data: Record<string, string>) =>
    kube.put(secretKind, {
      metadata: { namespace: "cp", name },
      data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
    });
  return { kube, registry, opened, declare, credentials, files, tick: (ms: number) => (now += ms) };
}

const FILE = "/etc/vhost-broker/mariadb-password/password";
const fromFile = { host: "settings-db", port: 3306, username: "root", password: { file: FILE } };
const full = { host: "db.cp", port: "3307", username: "admin", password: PASSWORD, "ca.crt": "CA" };

describe("ServerRegistry", () => {
  it("opens the declaring ControlPlane's server with its credentials Secret, CA included", async () => {
    const { kube, registry, opened, declare, credentials } = setUp();
    declare("one", "mariadb", "db-admin");
    credentials("db-admin", full);
    const endpoint = await registry.endpoint(kube, { namespace: "cp", name: "mariadb" });
    expect(endpoint).toMatchObject({ outcome: "ready", key: "db.cp:3307/admin" });
    expect(opened[0]?.target).toMatchObject({ host: "db.cp", port: 3307, username: "admin", ca: "CA" });
  });

  it("serves a ref no ControlPlane declares by the settings' server", async () => {
    const { kube, registry, opened } = setUp();
    expect(await registry.endpoint(kube, { namespace: "app", name: "mariadb" })).toMatchObject({
      outcome: "ready",
      key: "settings-db:3306/root",
    });
    expect(opened[0]?.target.source).toBe("settings");
  });

  it("waits, naming the Secret and never its values, while the credentials Secret is missing or incomplete", async () => {
    const { kube, registry, declare, credentials, opened, tick } = setUp();
    declare("one", "mariadb", "db-admin");
    const ref = { namespace: "cp", name: "mariadb" };
    expect(await registry.endpoint(kube, ref)).toEqual({
      outcome: "waiting",
      reason: "MariaDB cp/mariadb: its credentials Secret cp/db-admin is not found",
    });
    credentials("db-admin", { ...full, port: "x", password: PASSWORD });
    tick(10_000);
    const bad = await registry.endpoint(kube, ref);
    expect(bad).toMatchObject({
      outcome: "waiting",
      reason: expect.stringContaining("names no usable port"),
    });
    credentials("db-admin", { host: "h", port: "1", username: "u", password: "" });
    tick(10_000);
    const incomplete = await registry.endpoint(kube, ref);
    expect(incomplete).toMatchObject({
      outcome: "waiting",
      reason: expect.stringContaining('lacks "password"'),
    });
    expect(JSON.stringify([bad, incomplete])).not.toContain(PASSWORD);
    expect(opened).toHaveLength(0);
  });

  it("never asks for a credentials Secret outside secret-namespaces", async () => {
    const { kube, registry, declare, credentials } = setUp({ secretNamespaces: ["app"] });
    declare("one", "mariadb", "db-admin");
    credentials("db-admin", full);
    const endpoint = await registry.endpoint(kube, { namespace: "cp", name: "mariadb" });
    expect(endpoint).toMatchObject({ outcome: "waiting", reason: expect.stringContaining('namespace "cp"') });
    expect(kube.calls.filter((c) => c.kind === "Secret")).toEqual([]);
  });

  it("reads the Secret again after its time, and a rotated password gets a new pool, the old one closed", async () => {
    const { kube, registry, declare, credentials, opened, tick } = setUp();
    declare("one", "mariadb", "db-admin");
    credentials("db-admin", full);
    const ref = { namespace: "cp", name: "mariadb" };
    await registry.endpoint(kube, ref);
    credentials("db-admin", { ...full, password: "rotated" });
    tick(5_000);
    await registry.endpoint(kube, ref);
    expect(opened).toHaveLength(1);
    tick(5_000);
    await registry.endpoint(kube, ref);
    expect(opened.map((o) => [o.target.password, o.closed])).toEqual([
      [PASSWORD, true],
      ["rotated", false],
    ]);
  });

  it("reads the Secret again at once after the server refused the administrator's login", async () => {
    const { kube, registry, declare, credentials, opened } = setUp();
    declare("one", "mariadb", "db-admin");
    credentials("db-admin", full);
    const ref = { namespace: "cp", name: "mariadb" };
    const first = await registry.endpoint(kube, ref);
    if (first.outcome !== "ready") throw new Error("not ready");
    opened[0]!.fail = Object.assign(new Error("Access denied"), { errno: 1045 });
    await expect(first.client.run("CREATE DATABASE x")).rejects.toThrow("Access denied");
    credentials("db-admin", { ...full, password: "rotated" });
    await registry.endpoint(kube, ref);
    expect(opened.map((o) => o.target.password)).toEqual([PASSWORD, "rotated"]);
  });

  it("reads the settings' password file again after its time: changed content gets a new pool, the old one closed", async () => {
    const { kube, registry, opened, files, tick } = setUp({ settingsServer: fromFile });
    const ref = { namespace: "app", name: "mariadb" };
    files.set(FILE, `${PASSWORD}\n`);
    expect(await registry.endpoint(kube, ref)).toMatchObject({
      outcome: "ready",
      key: "settings-db:3306/root",
    });
    files.set(FILE, "rotated\n");
    tick(5_000);
    await registry.endpoint(kube, ref);
    expect(opened).toHaveLength(1);
    tick(5_000);
    await registry.endpoint(kube, ref);
    tick(10_000);
    await registry.endpoint(kube, ref);
    expect(opened.map((o) => [o.target.password, o.target.version, o.closed])).toEqual([
      [PASSWORD, "file/1", true],
      ["rotated", "file/2", false],
    ]);
  });

  it("reads the settings' password file again at once after the server refused the administrator's login", async () => {
    const { kube, registry, opened, files } = setUp({ settingsServer: fromFile });
    const ref = { namespace: "app", name: "mariadb" };
    files.set(FILE, PASSWORD);
    const first = await registry.endpoint(kube, ref);
    if (first.outcome !== "ready") throw new Error("not ready");
    opened[0]!.fail = Object.assign(new Error("Access denied"), { errno: 1045 });
    await expect(first.client.run("CREATE DATABASE x")).rejects.toThrow("Access denied");
    files.set(FILE, "rotated");
    await registry.endpoint(kube, ref);
    expect(opened.map((o) => [o.target.password, o.closed])).toEqual([
      [PASSWORD, true],
      ["rotated", false],
    ]);
  });

  it("waits, naming the password file and never its content, and reads it again after its time", async () => {
    const { kube, registry, opened, files, tick } = setUp({ settingsServer: fromFile });
    const ref = { namespace: "app", name: "mariadb" };
    expect(await registry.endpoint(kube, ref)).toEqual({
      outcome: "waiting",
      reason: `MariaDB app/mariadb: the administrator's password file ${FILE} (mariadb-password-file) does not exist`,
    });
    files.set(FILE, "\n");
    tick(10_000);
    const empty = await registry.endpoint(kube, ref);
    expect(empty).toMatchObject({
      outcome: "waiting",
      reason: expect.stringContaining(`${FILE} (mariadb-password-file) is empty`),
    });
    files.set(FILE, PASSWORD);
    tick(10_000);
    expect(await registry.endpoint(kube, ref)).toMatchObject({ outcome: "ready" });
    files.delete(FILE);
    tick(10_000);
    const gone = await registry.endpoint(kube, ref);
    expect(gone).toMatchObject({ outcome: "waiting", reason: expect.stringContaining("does not exist") });
    expect(JSON.stringify(gone)).not.toContain(PASSWORD);
    expect(opened.map((o) => o.target.password)).toEqual([PASSWORD]);
  });

  it("never moves a ref that a ControlPlane declared to the settings' server", async () => {
    const { kube, registry, declare, credentials } = setUp();
    declare("one", "mariadb", "db-admin");
    credentials("db-admin", full);
    const ref = { namespace: "cp", name: "mariadb" };
    await registry.endpoint(kube, ref);
    kube.remove(controlPlaneKind, "cp", "one");
    expect(await registry.endpoint(kube, ref)).toMatchObject({
      outcome: "waiting",
      reason: expect.stringContaining("no longer declared"),
    });
  });
});
