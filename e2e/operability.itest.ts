// What a platform team meets on an OpenBao outage, through the operator process. A TCP proxy stands
// between the operator and OpenBao; closing it is the outage (the shared OpenBao keeps running for the
// other tests). While it lasts, the order's passes fail transiently: controller_runtime_reconcile_errors_total
// rises, the warning log names the retry interval, VhostReady says SecretStoreNotReady, no Warning event
// is recorded, and the chart's PrometheusRule expressions hold over the scraped /metrics. Once the proxy
// is back all of it clears. The rules are evaluated by promtool (harness/probes/promtool.ts) over real
// scrapes, with the scrapes' job label added as Prometheus adds it; a rule's [5m] range covers the
// scrapes of the phase it is asked about (the outage, or after the recovery), and its `for:` is not
// waited out. The teardown
// then records Deleting and Deleted. Last, with the waiting retry set far beyond the test, a topology
// object waiting for its RabbitmqCluster is woken by the RabbitmqCluster's watch, and a Binding applied
// with its Queue and Exchange by theirs.
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createManagedBus, localBrokerFromEnv } from "../harness/world/managed-bus.ts";
import { manifestObjects, renderChart } from "../harness/charts/helm.ts";
import { localEnv } from "../harness/world/env.ts";
import { eventually, freshNamespace, testCluster } from "../harness/world/kube.ts";
import { holds, parseScrape, type Scrape } from "../harness/probes/promtool.ts";
import { OperatorProcess } from "../harness/operator/operator-process.ts";
import { TcpProxy } from "../harness/world/tcp-proxy.ts";
import {
  applyOrder,
  condition,
  createWorld,
  destroyWorld,
  isReady,
  readOrder,
  waitForOrder,
  worldEvents,
  type World,
} from "../harness/world/world.ts";

const RELEASE = "vb";

/** The chart's alert expressions, by alert name. */
async function alertRules(): Promise<Map<string, string>> {
  const manifest = await renderChart("vhost-broker", {
    release: RELEASE,
    namespace: "vhost-broker-system",
    // The chart refuses to render without an OpenBao address; the rule does not depend on it.
    set: { "metrics.prometheusRule.enabled": "true", "settings.openbao-address": "http://127.0.0.1:1" },
  });
  const rule = manifestObjects(manifest).find((o) => o.kind === "PrometheusRule");
  const groups = (rule?.["spec"] as { groups: { rules: { alert: string; expr: string }[] }[] }).groups;
  return new Map(groups.flatMap((g) => g.rules.map((r) => [r.alert, r.expr] as const)));
}

describe("an OpenBao outage, operator process", () => {
  let world: World | undefined;
  let operator: OperatorProcess | undefined;
  let proxy: TcpProxy | undefined;

  beforeAll(async () => {
    world = await createWorld("outage");
    proxy = await TcpProxy.to(localEnv().BAO_ADDR);
    // A converged order is looked at again every few seconds, so the outage is noticed at once.
    operator = await OperatorProcess.start({
      args: [
        `--openbao-address=http://127.0.0.1:${proxy.port}`,
        "--drift-resync-min=2s",
        "--drift-resync-max=3s",
      ],
    });
    // Another test run's operator may hold the lock for a while (harness/operator/operator-process.ts).
  }, 15 * 60_000);

  afterAll(async () => {
    await proxy?.start();
    try {
      await destroyWorld(world);
    } finally {
      await operator?.stop();
      await proxy?.stop();
    }
  }, 120_000);

  it("counts it as reconcile errors without Warning events, says why, fires the alerts, and clears once OpenBao is back", async () => {
    const w = world as World;
    const op = operator as OperatorProcess;
    const rules = await alertRules();
    const scrape = async (): Promise<Scrape> =>
      parseScrape(await op.metrics(), Date.now() / 1000, { job: `${RELEASE}-metrics` });
    const errors = (s: Scrape) =>
      s.samples
        .get("controller_runtime_reconcile_errors_total")
        ?.find((x) => x.labels["controller"] === "rabbitmqvhost")?.value ?? 0;
    const fires = (alert: string, scrapes: Scrape[], labels: Record<string, string> = {}) =>
      holds(rules.get(alert) ?? `missing alert ${alert}`, scrapes, labels);
    const ours = { namespace: w.tenantNs, name: "outage" };

    await applyOrder(w, "outage", { rotation: { interval: "0s", gracePeriod: "1m" } });
    await waitForOrder(w, "outage", "Ready", isReady, 60_000);
    const before = await scrape();
    expect(await fires("VhostBrokerOrderNotReady", [before], ours)).toBe(false);
    const eventsBefore = (await worldEvents(w)).length;
    const logFrom = op.logs().split("\n").length;

    await proxy?.stop();
    const outage: Scrape[] = [before];
    const why = await eventually(
      "VhostReady to say SecretStoreNotReady",
      async () => {
        const c = condition(await readOrder(w, "outage"), "VhostReady");
        return c?.reason === "SecretStoreNotReady" ? c.message : undefined;
      },
      30_000,
    );
    expect(why).toMatch(/^the secret store cannot be used, so the credentials cannot be backed up: /);
    // Every order in the cluster fails alike; a rate needs a series seen at two scrapes that differ.
    const alerting = async () =>
      (await fires("VhostBrokerReconcileErrors", outage, { controller: "rabbitmqvhost" })) &&
      (await fires("VhostBrokerOrderNotReady", outage, ours)) &&
      (await fires("VhostBrokerBackupFailing", outage, { operation: "health" }));
    await eventually(
      "the reconcile errors to rise twice and the alert expressions to hold",
      async () => {
        outage.push(await scrape());
        const rose = errors(outage[outage.length - 1] as Scrape) >= errors(before) + 2;
        return rose && (await alerting()) ? true : undefined;
      },
      60_000,
      1000,
    );
    const warnings = op
      .logs()
      .split("\n")
      .slice(logFrom)
      .filter(
        (l) => l.includes("transient failure; retry scheduled") && l.includes('"controller":"rabbitmqvhost"'),
      );
    expect(warnings.length).toBeGreaterThanOrEqual(2);
    expect(warnings[0]).toContain('"level":"warn"');
    expect(warnings[0]).toContain('"retryInMs":10000');
    const newEvents = (await worldEvents(w)).slice(eventsBefore);
    expect(newEvents.filter((e) => e.type === "Warning")).toEqual([]);

    await proxy?.start();
    await waitForOrder(w, "outage", "Ready again", isReady, 60_000);
    const recovered = [await scrape()];
    await new Promise((r) => setTimeout(r, 4_000));
    recovered.push(await scrape());
    expect(errors(recovered[1] as Scrape)).toBe(errors(recovered[0] as Scrape));
    expect(await fires("VhostBrokerReconcileErrors", recovered, { controller: "rabbitmqvhost" })).toBe(false);
    expect(await fires("VhostBrokerOrderNotReady", recovered, ours)).toBe(false);
    expect(await fires("VhostBrokerBackupFailing", recovered)).toBe(false);
    expect((await worldEvents(w)).filter((e) => e.type === "Warning")).toEqual([]);

    // The teardown says so: Deleting when it starts, Deleted when the finalizer is released.
    await w.custom.deleteNamespacedCustomObject({
      group: "c5c3.io",
      version: "v1alpha1",
      plural: "rabbitmqvhosts",
      namespace: w.tenantNs,
      name: "outage",
    });
    const teardown = await eventually(
      "Deleting and Deleted events",
      async () => {
        // Listed by name, which is random; the order of recording is the events' time.
        const found = (await worldEvents(w))
          .filter((e) => e.involvedObject.name === "outage" && /^Delet/.test(e.reason ?? ""))
          .sort((a, b) => new Date(a.eventTime ?? 0).getTime() - new Date(b.eventTime ?? 0).getTime())
          .map((e) => [e.type, e.reason]);
        return found.length >= 2 ? found : undefined;
      },
      60_000,
    );
    expect(teardown).toEqual([
      ["Normal", "Deleting"],
      ["Normal", "Deleted"],
    ]);
  }, 300_000);
});

describe("a topology object waiting for its RabbitmqCluster, operator process", () => {
  const cluster = testCluster("management");
  const custom = cluster.config.makeApiClient(k8s.CustomObjectsApi);
  const vhosts = { group: "rabbitmq.com", version: "v1beta1", plural: "vhosts" } as const;
  const vhost = `vb-wake-${Date.now().toString(36)}`;
  let namespace = "";
  let operator: OperatorProcess | undefined;

  beforeAll(async () => {
    namespace = await freshNamespace(cluster, "wake");
    // The waiting retry is far beyond the test: only the RabbitmqCluster's watch can wake the Vhost.
    operator = await OperatorProcess.start({ args: ["--connection-wait-interval=10m"] });
  }, 15 * 60_000);

  afterAll(async () => {
    for (const plural of ["bindings", "queues", "exchanges", "vhosts"]) {
      await custom
        .deleteCollectionNamespacedCustomObject({ ...vhosts, plural, namespace })
        .catch(() => undefined);
    }
    await eventually(
      "the topology objects to be gone",
      async () => {
        for (const plural of ["bindings", "queues", "exchanges", "vhosts"]) {
          const left = (await custom.listNamespacedCustomObject({ ...vhosts, plural, namespace })) as {
            items: unknown[];
          };
          if (left.items.length > 0) return undefined;
        }
        return true;
      },
      30_000,
    ).catch(() => undefined);
    await operator?.stop();
    await cluster.core.deleteNamespace({ name: namespace }).catch(() => undefined);
  }, 120_000);

  it("is declared as soon as the RabbitmqCluster is ready, not at the next retry", async () => {
    await custom.createNamespacedCustomObject({
      ...vhosts,
      namespace,
      body: {
        apiVersion: "rabbitmq.com/v1beta1",
        kind: "Vhost",
        metadata: { name: "app" },
        spec: { name: vhost, rabbitmqClusterReference: { name: "rabbitmq" } },
      },
    });
    const readyOf = async () => {
      const object = (await custom.getNamespacedCustomObject({ ...vhosts, namespace, name: "app" })) as {
        status?: { conditions?: { type: string; status: string }[] };
      };
      return object.status?.conditions?.find((c) => c.type === "Ready")?.status;
    };
    await eventually("the Vhost to wait (Ready False)", async () =>
      (await readyOf()) === "False" ? true : undefined,
    );
    const since = Date.now();
    await createManagedBus(
      cluster.config,
      namespace,
      localBrokerFromEnv(localEnv() as unknown as NodeJS.ProcessEnv),
    );
    await eventually(
      "the Vhost to be Ready",
      async () => ((await readyOf()) === "True" ? true : undefined),
      30_000,
    );
    expect(Date.now() - since).toBeLessThan(30_000);
    const broker = localEnv();
    const auth = Buffer.from(`${broker.RABBITMQ_ADMIN_USERNAME}:${broker.RABBITMQ_ADMIN_PASSWORD}`).toString(
      "base64",
    );
    const declared = await fetch(`${broker.RABBITMQ_MANAGEMENT_URL}/api/vhosts/${vhost}`, {
      headers: { authorization: `Basic ${auth}` },
    });
    expect(declared.status).toBe(200);
  }, 120_000);

  it("declares a Binding applied with its Queue and Exchange as soon as both are Ready, not at the next retry", async () => {
    const objects = [
      ["bindings", "Binding", "b", { vhost, source: "x", destination: "q", destinationType: "queue" }],
      ["exchanges", "Exchange", "x", { name: "x", vhost, type: "direct" }],
      ["queues", "Queue", "q", { name: "q", vhost }],
    ] as const;
    // The Binding first: a pass before its ends exist on the broker waits for them.
    for (const [plural, kind, name, spec] of objects) {
      await custom.createNamespacedCustomObject({
        ...vhosts,
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
    await eventually(
      "the Binding to be Ready",
      async () => {
        const object = (await custom.getNamespacedCustomObject({
          ...vhosts,
          plural: "bindings",
          namespace,
          name: "b",
        })) as { status?: { conditions?: { type: string; status: string }[] } };
        return object.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") || undefined;
      },
      60_000,
    );
    const broker = localEnv();
    const auth = Buffer.from(`${broker.RABBITMQ_ADMIN_USERNAME}:${broker.RABBITMQ_ADMIN_PASSWORD}`).toString(
      "base64",
    );
    const bindings = await fetch(`${broker.RABBITMQ_MANAGEMENT_URL}/api/bindings/${vhost}/e/x/q/q`, {
      headers: { authorization: `Basic ${auth}` },
    });
    expect(((await bindings.json()) as unknown[]).length).toBe(1);
  }, 120_000);
});
