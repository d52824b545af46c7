// The cost of a converged order, measured through the operator process against the real apiserver:
// over 50 resync passes, how many requests reach the API server (rest_client_requests_total, which
// counts every request the port makes) and how many versions OpenBao gains. The order is provisioned by
// one operator with the built-in topology controller; a second one, with the topology controller off
// and a short resync period, then only reconciles the converged order again and again. Prints the
// figures; docs/runtime.md records them. The order's own status writes cost no pass: its watch drops
// updates that change neither its generation nor its metadata (vhost_broker_watch_events_total).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backupPath } from "../src/orders/core/naming.ts";
import { RABBITMQ_NAMING } from "../src/orders/rabbitmq/naming.ts";
import { localEnv } from "../harness/world/env.ts";
import { eventually } from "../harness/world/kube.ts";
import { OperatorProcess } from "../harness/operator/operator-process.ts";
import {
  applyOrder,
  createWorld,
  destroyWorld,
  isReady,
  readOrder,
  waitForOrder,
  type World,
} from "../harness/world/world.ts";

const PASSES = 50;

/** The sum of a counter's series whose labels match `filter`. */
function counter(metrics: string, name: string, filter: (labels: string) => boolean = () => true): number {
  let total = 0;
  for (const line of metrics.split("\n")) {
    const m = new RegExp(`^${name}\\{([^}]*)\\} ([0-9.e+]+)$`).exec(line);
    if (m && filter(m[1] ?? "")) total += Number(m[2]);
  }
  return total;
}

const requestsBy = (metrics: string, method: string) =>
  counter(metrics, "rest_client_requests_total", (l) => l.includes(`method="${method}"`));
const passes = (metrics: string) =>
  counter(metrics, "controller_runtime_reconcile_total", (l) => l.includes('controller="rabbitmqvhost"'));
/** Updates of the order itself that its watch handed on ("enqueued") or dropped ("filtered"). */
const orderUpdates = (metrics: string, outcome: string) =>
  counter(
    metrics,
    "vhost_broker_watch_events_total",
    (l) =>
      l.includes('controller="rabbitmqvhost"') &&
      l.includes('kind="RabbitMQVhost"') &&
      l.includes('event="update"') &&
      l.includes(`outcome="${outcome}"`),
  );

async function openBaoVersion(path: string): Promise<number> {
  const env = localEnv();
  const res = await fetch(`${env.BAO_ADDR}/v1/kv-v2/metadata/${path}`, {
    headers: { "X-Vault-Token": env.BAO_TOKEN },
  });
  const body = (await res.json()) as { data?: { current_version?: number } };
  return body.data?.current_version ?? 0;
}

describe("a converged order's steady state, operator process", () => {
  let world: World | undefined;
  let operator: OperatorProcess | undefined;

  beforeAll(async () => {
    world = await createWorld("steady");
  }, 120_000);

  afterAll(async () => {
    // The teardown needs the topology controller to let go of the children.
    try {
      await destroyWorld(world);
    } finally {
      await operator?.stop();
    }
  }, 120_000);

  it(`makes no API read outside the cache, no write and no OpenBao write over ${PASSES} passes`, async () => {
    const w = world as World;
    // Provisioned and delivered with the built-in topology controller; no schedule, so nothing is due.
    operator = await OperatorProcess.start();
    await applyOrder(w, "steady", { rotation: { interval: "0s", gracePeriod: "1m" } });
    await waitForOrder(w, "steady", "Ready", isReady, 60_000);
    // Provisioning wrote the order's status several times; none of those writes cost a pass.
    const provisioned = await operator.metrics();
    expect(orderUpdates(provisioned, "filtered")).toBeGreaterThan(0);
    await operator.stop();

    // Only the order controller, every cached object handed to it again every 200 ms.
    operator = await OperatorProcess.start({
      args: ["--topology-controller=false", "--resync-period=200ms"],
    });
    const op = operator;
    await eventually(
      "the first passes",
      async () => (passes(await op.metrics()) >= 2 ? true : undefined),
      30_000,
      100,
    );
    const path = backupPath(RABBITMQ_NAMING, { cluster: "", namespace: w.tenantNs, name: "steady" }, w.cpNs);
    const before = { metrics: await op.metrics(), version: await openBaoVersion(path) };
    const start = passes(before.metrics);
    const after = await eventually(
      `${PASSES} more passes`,
      async () => {
        const metrics = await op.metrics();
        return passes(metrics) >= start + PASSES ? metrics : undefined;
      },
      60_000,
      100,
    );
    const delta = (method: string) => requestsBy(after, method) - requestsBy(before.metrics, method);
    const figures = {
      passes: passes(after) - start,
      apiReads: delta("GET"),
      apiWrites: delta("POST") + delta("PUT") + delta("PATCH") + delta("DELETE"),
      openBaoWrites: (await openBaoVersion(path)) - before.version,
      passesFromOwnWrites: orderUpdates(after, "enqueued") - orderUpdates(before.metrics, "enqueued"),
    };
    console.log(`steady state of a converged order: ${JSON.stringify(figures)}`);
    expect(figures.passes).toBeGreaterThanOrEqual(PASSES);
    expect(figures).toMatchObject({ apiReads: 0, apiWrites: 0, openBaoWrites: 0, passesFromOwnWrites: 0 });
    expect(isReady(await readOrder(w, "steady"))).toBe(true);
    await operator.stop();
    operator = await OperatorProcess.start();
  }, 240_000);
});
