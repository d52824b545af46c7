// A tenant's Secrets that carry the operator's watch labels, through the operator process: Secrets of
// 900 KB in a tenant namespace, labelled for each Secret watch of a RabbitMQ operator (an order's name
// label, the managed bus's part-of label, the topology controller's label), must not grow its JS heap
// by their size. Whole, each was cached once per selector, three copies of 1.2 MB (base64). The caches
// keep a Secret past 16 KiB of data and annotations without them, one copy for all
// (src/runtime/port/secret-bound.ts).
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installCrds } from "../harness/world/managed-bus.ts";
import { parseMetrics, sum } from "../harness/probes/prometheus.ts";
import { TOPOLOGY_SECRET_LABEL } from "../src/api/contracts.ts";
import { labelKeys } from "../src/orders/core/naming.ts";
import { RABBITMQ_PART_OF } from "../src/orders/rabbitmq/kind.ts";
import { RABBITMQ_NAMING } from "../src/orders/rabbitmq/naming.ts";
import { eventually, freshNamespace, testCluster } from "../harness/world/kube.ts";
import { OperatorProcess } from "../harness/operator/operator-process.ts";

const SECRETS = 40;
const BYTES = 900_000;
/** The heap growth allowed for each Secret: an eighth of its size (about 1 KiB stays, the rest is noise). */
const PER_SECRET = 128 * 1024;
const FLOOD = "cache-flood";

const [partOfKey = "", partOfValue = ""] = RABBITMQ_PART_OF.split("=");
const labels = {
  [labelKeys(RABBITMQ_NAMING).name]: "none",
  [partOfKey]: partOfValue,
  [TOPOLOGY_SECRET_LABEL]: "true",
  flood: FLOOD,
};

describe("a tenant's labelled Secrets in the operator's caches, operator process", () => {
  const cluster = testCluster("management");
  let namespace = "";
  let operator: OperatorProcess | undefined;

  beforeAll(async () => {
    await installCrds(cluster.config);
    namespace = await freshNamespace(cluster, "cache-bound");
    // Another run's operator may hold the operator lock for a while.
    operator = await OperatorProcess.start();
  }, 900_000);

  afterAll(async () => {
    try {
      await operator?.stop();
    } finally {
      if (namespace) await cluster.core.deleteNamespace({ name: namespace }).catch(() => undefined);
    }
  }, 60_000);

  it(`holds ${SECRETS} Secrets of ${BYTES / 1000} KB in far less than their size`, async () => {
    const op = operator as OperatorProcess;
    const scrape = async () => parseMetrics(await op.metrics());
    const heap = async () => sum(await scrape(), "nodejs_heap_size_used_bytes");
    const secretAdds = async () =>
      sum(await scrape(), "vhost_broker_watch_events_total", { kind: "Secret", event: "add" });
    const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

    // The start-up's garbage goes first: the least of a few scrapes.
    let heapBefore = Infinity;
    for (let i = 0; i < 8; i++, await pause(1000)) heapBefore = Math.min(heapBefore, await heap());
    const addsBefore = await secretAdds();
    try {
      for (let i = 0; i < SECRETS; i++) {
        await cluster.core.createNamespacedSecret({
          namespace,
          body: {
            metadata: { name: `flood-${i}`, labels },
            data: { password: randomBytes(BYTES).toString("base64") },
          },
        });
      }
      // Each Secret reaches the order's, the bus's and the topology controllers' watches.
      let seen = 0;
      await eventually(
        "every Secret in every watch",
        async () => {
          const adds = (await secretAdds()) - addsBefore;
          const settled = adds === seen && adds >= SECRETS * 3;
          seen = adds;
          return settled ? true : undefined;
        },
        60_000,
        2000,
      );
      // The watch events' parsing leaves garbage behind: the heap falls back once V8 collects it
      // (some 25 s here). What the caches hold stays.
      const bound = SECRETS * PER_SECRET;
      let grown = Infinity;
      for (const deadline = Date.now() + 60_000; grown >= bound && Date.now() < deadline; await pause(1000)) {
        grown = Math.min(grown, (await heap()) - heapBefore);
      }
      console.log(
        `heap grown by ${SECRETS} Secrets of ${BYTES} bytes: ${(grown / 2 ** 20).toFixed(1)} MiB ` +
          `(${Math.round(grown / SECRETS / 1024)} KiB a Secret)`,
      );
      expect(grown).toBeLessThan(bound);
    } finally {
      await cluster.core.deleteCollectionNamespacedSecret({ namespace, labelSelector: `flood=${FLOOD}` });
    }
  }, 240_000);
});
