// A hardened MariaDB: the local server with simple_password_check loaded (strict_password_validation is
// ON by default), which refuses a password given as a hash. Through the operator process with the
// built-in SQL controller: a MariaDBDatabase order becomes Ready, its credentials log in, a raise of
// passwordGeneration switches and the old account goes after its grace; a seed-002 User whose Secret holds
// a password the plugin refuses reads PasswordRefused naming the policy; and with a policy no generated
// password meets, the order says so and, once the policy is relaxed, a new generation with a new password
// is delivered instead of the refused one. The plugin is unloaded afterwards; no password reaches the
// operator's logs, the orders' status or the conditions.
import { randomBytes } from "node:crypto";
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mariaDBDatabaseKind, sqlUserKind } from "../src/api/index.ts";
import { defaultDatabaseName, passwordSecretName, userName } from "../src/orders/mariadb/naming.ts";
import {
  adminServer,
  createResource,
  custom,
  getResource,
  ready,
  tearDownNamespace,
  writePasswordSecret,
} from "../harness/world/sql.ts";
import { localEnv } from "../harness/world/env.ts";
import { eventually, testCluster } from "../harness/world/kube.ts";
import { OperatorProcess } from "../harness/operator/operator-process.ts";
import {
  apply,
  conditionOf,
  group,
  logIn,
  assignedTenant,
  mariadbOrderArgs,
  readMariaDBOrder,
  readyOf,
  refused,
  secretData,
  type Order,
} from "./support/mariadb-world.ts";

const env = localEnv();
const cluster = testCluster("management");
const server = adminServer();
const merge = k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch);
const rotation = { interval: "0s", gracePeriod: "5s" };

let cpNs = "";
let tenantNs = "";
let operator: OperatorProcess | undefined;
/** Whether this file loaded the plugin (and so unloads it), and the policy's length to restore. */
let installedHere = false;
let minimalLength: number | undefined;
const secrets = new Set<string>([env.MARIADB_ADMIN_PASSWORD]);
const orders: string[] = [];

const key = (name: string) => ({ cluster: "", namespace: tenantNs, name });

const readOrder = (name: string) => readMariaDBOrder(tenantNs, name);

async function order(name: string, spec: Record<string, unknown> = {}) {
  if (!orders.includes(name)) orders.push(name);
  await apply(mariaDBDatabaseKind, tenantNs, name, {
    spec: { controlPlaneRef: { name: "cp", namespace: cpNs }, deletionPolicy: "Delete", rotation, ...spec },
  });
}

async function waitReady(name: string, generation: number): Promise<Order> {
  let last: Order | undefined;
  return eventually(
    `${name} Ready with generation ${generation}`,
    async () => {
      last = await readOrder(name);
      return readyOf(last)?.status === "True" && last?.status?.passwordGeneration === generation
        ? last
        : undefined;
    },
    120_000,
  ).catch((error: unknown) => {
    throw new Error(`${(error as Error).message}; last status: ${JSON.stringify(last?.status)}`);
  });
}

const delivered = (name: string) => secretData(tenantNs, `${name}-credentials`, secrets);

async function accountExists(name: string): Promise<boolean> {
  return (await server.select("SELECT 1 FROM mysql.user WHERE User = ?", [name])).length > 0;
}

async function pluginActive(): Promise<boolean> {
  const rows = await server.select(
    "SELECT 1 FROM information_schema.PLUGINS WHERE PLUGIN_NAME = ? AND PLUGIN_STATUS = ?",
    ["simple_password_check", "ACTIVE"],
  );
  return rows.length > 0;
}

beforeAll(async () => {
  ({ cpNs, tenantNs } = await assignedTenant("mdbh"));
  if (!(await pluginActive())) {
    await server.run("INSTALL SONAME 'simple_password_check'");
    installedHere = true;
  }
  const [row] = await server.select<{ length: number }>(
    "SELECT @@simple_password_check_minimal_length AS length",
    [],
  );
  minimalLength = Number(row?.length);
  operator = await OperatorProcess.start({
    args: mariadbOrderArgs(env.MARIADB_ADMIN_USERNAME, "2s"),
    env: { VHOST_BROKER_MARIADB_PASSWORD: env.MARIADB_ADMIN_PASSWORD },
  });
}, 10 * 60_000);

afterAll(async () => {
  try {
    await operator?.stop();
    for (const name of orders) {
      const where = { ...group(mariaDBDatabaseKind), namespace: tenantNs, name };
      await custom
        .patchNamespacedCustomObject({ ...where, body: { metadata: { finalizers: null } } }, merge)
        .catch(() => undefined);
    }
    if (tenantNs) await cluster.core.deleteNamespace({ name: tenantNs }).catch(() => undefined);
    if (cpNs) await tearDownNamespace(cpNs);
    for (const name of orders) {
      await server
        .run(`DROP DATABASE IF EXISTS \`${defaultDatabaseName(key(name))}\``)
        .catch(() => undefined);
      for (const generation of [1, 2, 3, 4])
        await server
          .run(`DROP USER IF EXISTS '${userName(key(name), generation)}'@'%'`)
          .catch(() => undefined);
    }
    await server.run("DROP USER IF EXISTS 'hardened-weak'@'%'").catch(() => undefined);
  } finally {
    // The next files create accounts with hashes: the server is left as it was found.
    if (minimalLength) await server.run(`SET GLOBAL simple_password_check_minimal_length = ${minimalLength}`);
    if (installedHere) await server.run("UNINSTALL SONAME 'simple_password_check'");
    await server.close();
  }
});

describe("a MariaDB that validates passwords, operator process", () => {
  it("refuses a password given as a hash, the way the operator used to send it", async () => {
    const hashOnly =
      "CREATE USER 'hardened-hash'@'%' IDENTIFIED BY PASSWORD '*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19'";
    await expect(server.run(hashOnly)).rejects.toMatchObject({ code: "ER_OPTION_PREVENTS_STATEMENT" });
  });

  it("provisions an order whose credentials log in, then rotates it and sweeps the old account", async () => {
    await order("hard");
    await waitReady("hard", 1);
    const first = await delivered("hard");
    expect(await logIn(first)).toBeDefined();

    await order("hard", { passwordGeneration: 2 });
    await waitReady("hard", 2);
    const second = await delivered("hard");
    expect(second["password"]).not.toBe(first["password"]);
    expect(await logIn(second)).toBeDefined();
    await eventually(
      "generation 1's account swept after its grace",
      async () => ((await accountExists(userName(key("hard"), 1))) ? undefined : true),
      90_000,
    );
    expect(await refused(first)).toBe(true);
    expect(await logIn(second)).toBeDefined();
  }, 240_000);

  it("says PasswordRefused, naming the policy, on a seed-002 User whose password the plugin refuses", async () => {
    const weak = `wk${randomBytes(2).toString("hex")}`;
    secrets.add(weak);
    await writePasswordSecret(cpNs, "weak-password", weak);
    await createResource(sqlUserKind, cpNs, "weak", {
      name: "hardened-weak",
      mariaDbRef: { name: "mariadb" },
      passwordSecretKeyRef: { name: "weak-password", key: "password" },
    });
    const condition = await eventually("the User refused", async () => {
      const c = ready(await getResource(sqlUserKind, cpNs, "weak"));
      return c?.reason === "PasswordRefused" ? c : undefined;
    });
    expect(condition.status).toBe("False");
    expect(condition.message).toContain("simple_password_check");
    expect(condition.message).toContain("strict_password_validation ON");
    expect(await accountExists("hardened-weak")).toBe(false);
  });

  it("with a policy no generated password meets, says so and tries a new password, then delivers one", async () => {
    await server.run("SET GLOBAL simple_password_check_minimal_length = 100");
    await order("strict");
    const names = (n: number) => userName(key("strict"), n);
    const refusal = await eventually(
      "the order names the policy",
      async () => {
        const c = conditionOf(await readOrder("strict"), "DatabaseReady");
        return c?.message.includes("password validation") ? c : undefined;
      },
      90_000,
    );
    expect(refusal.status).toBe("False");
    expect(refusal.message).toContain("simple_password_check");
    expect(refusal.message).toContain(`'${names(1)}'`);
    expect(refusal.message).toContain("a new user with a new password follows from");
    expect(await accountExists(names(1))).toBe(false);

    // A minute after the refusal: generation 2 with a new password, refused too while the policy stands.
    await eventually(
      "generation 2 tried and refused",
      async () => {
        const c = conditionOf(await readOrder("strict"), "DatabaseReady");
        return c?.message.includes(`'${names(2)}'`) && c.message.includes("password validation")
          ? true
          : undefined;
      },
      120_000,
    );
    const passwords = await Promise.all(
      [1, 2].map(
        async (n) => (await secretData(cpNs, passwordSecretName(key("strict"), n), secrets))["password"],
      ),
    );
    expect(passwords[0]).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(passwords[0]).not.toBe(passwords[1]);

    // The policy relaxed: the order is delivered with a generation that logs in.
    await server.run(`SET GLOBAL simple_password_check_minimal_length = ${minimalLength ?? 8}`);
    const ready = await eventually(
      "strict Ready",
      async () => {
        const o = await readOrder("strict");
        return readyOf(o)?.status === "True" ? o : undefined;
      },
      120_000,
    );
    expect(ready.status?.passwordGeneration).toBeGreaterThanOrEqual(2);
    expect(await logIn(await delivered("strict"))).toBeDefined();
  }, 300_000);

  it("writes no password into the logs, the orders' status or conditions", async () => {
    const statuses = JSON.stringify(await Promise.all(orders.map((name) => readOrder(name))));
    const user = JSON.stringify(await getResource(sqlUserKind, cpNs, "weak"));
    const logs = operator?.logs() ?? "";
    expect(logs.length).toBeGreaterThan(0);
    for (const secret of secrets) {
      expect(logs).not.toContain(secret);
      expect(statuses).not.toContain(secret);
      expect(user).not.toContain(secret);
    }
  });
});
