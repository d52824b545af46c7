// Drift checks by list (issue 32) in the running operator, against the local broker: objects the
// built-in topology controller declared are verified by one listing of each list endpoint per broker
// and verification period, not a GET per object, and nothing is written while nothing drifts; a vhost
// deleted, a permission changed and a queue deleted behind the operator's back are each repaired
// within a period, by their own objects alone. The test's RabbitmqCluster names the broker through a
// recording proxy, so its requests are told apart from those the operator makes for other namespaces.
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createManagedBus, installCrds, localBrokerFromEnv } from "../harness/world/managed-bus.ts";
import { localEnv } from "../harness/world/env.ts";
import { eventually, freshNamespace, testCluster } from "../harness/world/kube.ts";
import { OperatorProcess } from "../harness/operator/operator-process.ts";
import { removeTopologyObjects } from "./support/topology-objects.ts";
import { RecordingProxy } from "../harness/world/recording-proxy.ts";

const env = localEnv();
const cluster = testCluster("management");
const custom = cluster.config.makeApiClient(k8s.CustomObjectsApi);
const suffix = Date.now().toString(36);
/** Orders' worth of objects: a vhost, a user, its permission and a queue each. */
const SETS = 12;
const PERIOD_MS = 8_000;
const vhostOf = (i: number) => `vb-list-${suffix}-${i}`;

let namespace = "";
let operator: OperatorProcess | undefined;
let proxy: RecordingProxy | undefined;

const authorization = `Basic ${Buffer.from(`${env.RABBITMQ_ADMIN_USERNAME}:${env.RABBITMQ_ADMIN_PASSWORD}`).toString("base64")}`;
const admin = (path: string, init: RequestInit = {}) =>
  fetch(`${env.RABBITMQ_MANAGEMENT_URL}/api/${path}`, {
    ...init,
    headers: { authorization, "content-type": "application/json" },
  });

async function create(plural: string, kind: string, name: string, spec: Record<string, unknown>) {
  await custom.createNamespacedCustomObject({
    group: "rabbitmq.com",
    version: "v1beta1",
    plural,
    namespace,
    body: {
      apiVersion: "rabbitmq.com/v1beta1",
      kind,
      metadata: { name },
      spec: { ...spec, rabbitmqClusterReference: { name: "rabbitmq" } },
    },
  });
}

async function allReady(plural: string): Promise<boolean> {
  const { items } = (await custom.listNamespacedCustomObject({
    group: "rabbitmq.com",
    version: "v1beta1",
    plural,
    namespace,
  })) as { items: { status?: { conditions?: { type: string; status: string }[] } }[] };
  return (
    items.length === SETS &&
    items.every((o) => o.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"))
  );
}

/** The operator's requests to the test's broker from now on, as `METHOD path?query`. */
function brokerRequestsFrom(): () => string[] {
  const from = proxy?.requests.length ?? 0;
  return () => (proxy?.requests.slice(from) ?? []).map((r) => `${r.method} ${r.path}`);
}

/** The broker check's request (src/topology/broker-checks.ts), every 15 s: the login's own user. */
const brokerCheck = `GET /api/users/${encodeURIComponent(env.RABBITMQ_ADMIN_USERNAME)}`;

/** A list endpoint's request: `GET /api/vhosts`, with or without a query. */
const listRequest = /^GET \/api\/[a-z-]+(\?|$)/;

/** The request that starts a listing of `list`: the whole list, asked for without a page. */
const listingOf = (list: string) => (r: string) =>
  (r === `GET /api/${list}` || r.startsWith(`GET /api/${list}?`)) && !r.includes("page=");

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  await installCrds(cluster.config);
  namespace = await freshNamespace(cluster, "drift-list");
  proxy = await RecordingProxy.http(env.RABBITMQ_MANAGEMENT_URL);
  await createManagedBus(cluster.config, namespace, {
    ...localBrokerFromEnv(env as unknown as NodeJS.ProcessEnv),
    managementUrl: `http://127.0.0.1:${proxy.port}`,
  });
  operator = await OperatorProcess.start({
    args: [`--topology-verification-period=${PERIOD_MS / 1000}s`, "--connection-wait-interval=1s"],
  });
  for (let i = 0; i < SETS; i++) {
    await create("vhosts", "Vhost", `v${i}`, { name: vhostOf(i) });
    await create("users", "User", `u${i}`, {});
    await create("permissions", "Permission", `p${i}`, {
      vhost: vhostOf(i),
      userReference: { name: `u${i}` },
      permissions: { configure: ".*", write: ".*", read: ".*" },
    });
    await create("queues", "Queue", `q${i}`, { name: "work", vhost: vhostOf(i), durable: true });
  }
  for (const plural of ["vhosts", "users", "permissions", "queues"]) {
    await eventually(`every ${plural} Ready`, async () => (await allReady(plural)) || undefined, 60_000);
  }
});

afterAll(async () => {
  await removeTopologyObjects(cluster, namespace, ["permissions", "queues", "users", "vhosts"], 60_000);
  await operator?.stop();
  await proxy?.close();
  await cluster.core.deleteNamespace({ name: namespace }).catch(() => undefined);
});

describe("drift checks by list", () => {
  it("verifies every object of a broker by about one listing per list endpoint and period, and writes nothing", async () => {
    // The objects declared at different moments fall due together after their first verification.
    await sleep(2 * PERIOD_MS);
    const during = brokerRequestsFrom();
    const periods = 3;
    await sleep(periods * PERIOD_MS);
    const requests = during();
    // Each list endpoint listed about once a period (a window of whole periods holds one listing more
    // at most); each listing asks for the whole list.
    for (const list of ["vhosts", "vhost-limits", "users", "user-limits", "permissions", "queues"]) {
      const listings = requests.filter(listingOf(list)).length;
      expect(listings).toBeGreaterThanOrEqual(periods - 1);
      expect(listings).toBeLessThanOrEqual(periods + 1);
    }
    // A GET per object read 70 a period. One is made only where a listing missed the object, which the
    // pages of a list that changes while it is read can do on a broker other tests share.
    expect(requests.filter((r) => !listRequest.test(r) && r !== brokerCheck).length).toBeLessThanOrEqual(
      periods,
    );
    expect(requests.filter((r) => r === brokerCheck).length).toBeLessThanOrEqual(
      Math.ceil((periods * PERIOD_MS) / 15_000),
    );
    expect(requests.filter((r) => !r.startsWith("GET ")).length).toBe(0);
  });

  it("repairs a deleted vhost, a changed permission and a deleted queue within a period", async () => {
    const deleted = vhostOf(0);
    const changed = vhostOf(1);
    const emptied = vhostOf(2);
    const user1 = (
      (await custom.getNamespacedCustomObject({
        group: "rabbitmq.com",
        version: "v1beta1",
        plural: "users",
        namespace,
        name: "u1",
      })) as { status: { username: string } }
    ).status.username;
    const during = brokerRequestsFrom();
    const started = performance.now();
    expect((await admin(`vhosts/${deleted}`, { method: "DELETE" })).status).toBe(204);
    const permission = `permissions/${encodeURIComponent(changed)}/${encodeURIComponent(user1)}`;
    const narrowed = JSON.stringify({ configure: "", write: "^$", read: "^$" });
    expect((await admin(permission, { method: "PUT", body: narrowed })).ok).toBe(true);
    expect((await admin(`queues/${emptied}/work`, { method: "DELETE" })).status).toBe(204);

    const repairedAt = async (what: string, check: () => Promise<boolean>) => {
      await eventually(what, async () => (await check()) || undefined, 3 * PERIOD_MS, 200);
      return performance.now() - started;
    };
    const [vhost, patterns, queue] = await Promise.all([
      repairedAt("the vhost declared again", async () => (await admin(`vhosts/${deleted}`)).ok),
      repairedAt("the permission's patterns back", async () => {
        const answer = await admin(permission);
        return answer.ok && ((await answer.json()) as { write: string }).write === ".*";
      }),
      repairedAt("the queue declared again", async () => (await admin(`queues/${emptied}/work`)).ok),
    ]);
    // Found by the next listing, at most a period later, and repaired by the pass that read it.
    for (const ms of [vhost, patterns, queue]) expect(ms).toBeLessThan(PERIOD_MS + 3_000);
    // The drifted objects were declared again, and nothing else was written.
    const writes = during().filter((r) => !r.startsWith("GET "));
    expect(writes).toContain(`PUT /api/vhosts/${deleted}`);
    expect(writes).toContain(`PUT /api/${permission}`);
    expect(writes).toContain(`PUT /api/queues/${emptied}/work`);
    expect(writes.filter((w) => w.includes(vhostOf(3)))).toEqual([]);
    // The deleted vhost took its queue and permission along: their own objects bring them back too. A
    // queue declared while its vhost is declared again may be refused (404, or 401 "Access refused."
    // before the vhost's creator holds its permissions): looked at again after the waiting interval
    // (--connection-wait-interval, 1 s), well within the wait.
    await repairedAt(
      "the deleted vhost's queue back",
      async () => (await admin(`queues/${deleted}/work`)).ok,
    );
  });
});
