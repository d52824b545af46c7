// The MariaDBDatabase sweep's stray accounts against the local MariaDB: the accounts of an order's
// naming scheme that no User declares are dropped, at every host; a declared generation, another
// order's account and a name only like the order's are kept; a fence refusal drops nothing; a missing
// administrator Secret removes nothing and says so, never naming a password.
import { randomBytes } from "node:crypto";
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generationOfUser } from "../../src/orders/core/evidence.ts";
import { userName } from "../../src/orders/mariadb/naming.ts";
import { removeStrayAccounts } from "../../src/orders/mariadb/stray-accounts.ts";
import { defaultTransport } from "../../src/mariadb/client.ts";
import { RestKube } from "../../src/runtime/port/rest-kube.ts";
import { KubeRest } from "../../src/runtime/port/kube-rest.ts";
import { FencedWriteError, type WriteFence } from "../../src/runtime/base/write-fence.ts";
import { freshNamespace, testCluster } from "../../harness/world/kube.ts";
import { adminServer, env } from "../../harness/world/sql.ts";

const cluster = testCluster("management");
const kube = new RestKube(new KubeRest(cluster.kubeconfig));
const core = cluster.config.makeApiClient(k8s.CoreV1Api);
const sql = adminServer();
const tag = randomBytes(3).toString("hex");
const order = { cluster: "", namespace: `tenant-${tag}`, name: `cell-${tag}` };
const neighbour = { ...order, name: `cell-${tag}-v1` };
const secretName = "mariadb-admin";
let namespace = "";

const account = (user: string, host = "%") => `'${user}'@'${host}'`;
const exists = async (user: string, host = "%") => {
  const rows = await sql.select("SELECT 1 AS one FROM mysql.user WHERE User = ? AND Host = ?", [user, host]);
  return rows.length > 0;
};
const server = () => ({
  mariadb: { namespace, name: "mariadb" },
  secret: { namespace, name: secretName },
  endpoint: { host: env.MARIADB_HOST, port: env.MARIADB_PORT },
});
/** The core's predicate: the order's own generation N, and no User declares N. */
const undeclared =
  (...declared: number[]) =>
  (username: string) => {
    const generation = generationOfUser({ userName }, order, username);
    return generation > 0 && !declared.includes(generation);
  };

const made = [
  account(userName(order, 1)),
  account(userName(order, 2)),
  account(userName(order, 2), "localhost"),
  account(userName(order, 3)),
  account(userName(neighbour, 1)),
  account(`${userName(order, 3)}x`),
];

beforeAll(async () => {
  namespace = await freshNamespace(cluster, "stray-accounts");
  await core.createNamespacedSecret({
    namespace,
    body: {
      metadata: { name: secretName },
      stringData: { username: env.MARIADB_ADMIN_USERNAME, password: env.MARIADB_ADMIN_PASSWORD },
    },
  });
  for (const a of made) await sql.run(`CREATE USER ${a} IDENTIFIED BY 'stray-${tag}'`);
});

afterAll(async () => {
  for (const a of made) await sql.run(`DROP USER IF EXISTS ${a}`).catch(() => undefined);
  await sql.close();
  if (namespace) await core.deleteNamespace({ name: namespace }).catch(() => undefined);
});

describe("an order's stray MariaDB accounts", () => {
  it("are not dropped when the fence refuses the write", async () => {
    const refusing: WriteFence = {
      check: (what) => {
        throw new FencedWriteError(what);
      },
      permits: () => false,
    };
    await expect(
      removeStrayAccounts(defaultTransport, kube, server(), order, undeclared(3), 5_000, refusing),
    ).rejects.toBeInstanceOf(FencedWriteError);
    expect(await exists(userName(order, 1))).toBe(true);
  });

  it("are dropped at every host; the declared one, a neighbour's and a look-alike stay", async () => {
    const result = await removeStrayAccounts(defaultTransport, kube, server(), order, undeclared(3), 5_000);
    expect(result.failure).toBeUndefined();
    expect([...result.removed].sort()).toEqual(
      [`${userName(order, 1)}@%`, `${userName(order, 2)}@%`, `${userName(order, 2)}@localhost`].sort(),
    );
    expect(await exists(userName(order, 1))).toBe(false);
    expect(await exists(userName(order, 2))).toBe(false);
    expect(await exists(userName(order, 2), "localhost")).toBe(false);
    expect(await exists(userName(order, 3))).toBe(true);
    expect(await exists(userName(neighbour, 1))).toBe(true);
    expect(await exists(`${userName(order, 3)}x`)).toBe(true);
    // A second sweep finds nothing more to do.
    expect(await removeStrayAccounts(defaultTransport, kube, server(), order, undeclared(3), 5_000)).toEqual({
      removed: [],
    });
  });

  it("remove nothing and say why when the administrator's Secret is missing", async () => {
    const result = await removeStrayAccounts(
      defaultTransport,
      kube,
      { ...server(), secret: { namespace, name: "missing" } },
      order,
      undeclared(),
      5_000,
    );
    expect(result.removed).toEqual([]);
    expect(result.failure).toContain(`${namespace}/missing`);
    expect(await exists(userName(order, 3))).toBe(true);
    expect(JSON.stringify(result)).not.toContain(env.MARIADB_ADMIN_PASSWORD);
  });
});
