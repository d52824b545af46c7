// The topology-alone load: one Vhost, then N Queues, N Exchanges and N Bindings (queue i to exchange
// i) applied at once, timed until all 3N are Ready. The benchmark learns of Ready through a watch on
// each kind (an informer), not by listing 3N objects again and again: a list of thousands every
// second is load on the API server the backend under test would be charged for.
import { randomBytes } from "node:crypto";
import { pino } from "pino";
import { bindingKind, exchangeKind, queueKind, vhostKind, type KindRef } from "../../src/api/index.ts";
import { realClock } from "../../src/runtime/base/clock.ts";
import { Informer } from "../../src/runtime/port/informer.ts";
import type { World } from "../world/world.ts";
import { apiPath, KubeRest, objectKey, type KubeObject } from "../../src/runtime/port/kube-rest.ts";
import { apiPath as brokerPath } from "../../src/topology/broker/index.ts";
import { readyStatus } from "../../src/external/index.ts";
import { inParallel, range, sleep, timed } from "./concurrency.ts";
import { brokerClient } from "./floors.ts";

const isReady = (o: KubeObject) => readyStatus(o) === "True";

/** Ready objects of `kinds` in `namespace` carrying `labelSelector`, as watches report them. */
export class ReadyWatch {
  private readonly ready = new Set<string>();
  private readonly informers: Informer[];

  constructor(rest: KubeRest, kinds: KindRef[], namespace: string, labelSelector: string) {
    const log = pino({ level: "warn" });
    this.informers = kinds.map((kind) => {
      const informer = new Informer({
        rest,
        kind,
        namespace,
        labelSelector,
        clock: realClock,
        log,
        resyncMs: 0,
        watchRestartMs: 5 * 60_000,
      });
      const seen = (o: KubeObject) => {
        const key = `${kind.kind}/${objectKey(o)}`;
        if (isReady(o)) this.ready.add(key);
        else this.ready.delete(key);
      };
      informer.addHandler({
        add: seen,
        update: (_previous, o) => seen(o),
        delete: (o) => this.ready.delete(`${kind.kind}/${objectKey(o)}`),
      });
      informer.start();
      return informer;
    });
  }

  count(): number {
    return this.ready.size;
  }

  async until(count: number, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.ready.size < count) {
      if (Date.now() > deadline)
        throw new Error(`timed out waiting for ${count} topology objects Ready (${this.ready.size} are)`);
      await sleep(50, signal);
    }
  }

  stop(): Promise<void[]> {
    return Promise.all(this.informers.map((i) => i.stop()));
  }
}

/** The label of the load's objects, so that the clean-up deletes these and never an order's Vhost. */
export const topologyLabel = "bench.vhost-broker/topology";

/**
 * The topology load's objects under one vhost in `namespace`, applied server-side and labelled with the
 * vhost's name: the Vhost itself, and the i-th triple (queue i, exchange i, a binding of the two).
 */
export function topologyLoad(rest: KubeRest, namespace: string, vhost: string) {
  const ref = { rabbitmqClusterReference: { name: "rabbitmq" } };
  const apply = (kind: KindRef, name: string, spec: Record<string, unknown>) =>
    rest.request("PATCH", apiPath(kind, namespace, name), {
      query: { fieldManager: "vhost-broker-bench", force: true },
      contentType: "application/apply-patch+yaml",
      body: {
        apiVersion: kind.apiVersion,
        kind: kind.kind,
        metadata: { name, namespace, labels: { [topologyLabel]: vhost } },
        spec,
      },
    });
  return {
    selector: `${topologyLabel}=${vhost}`,
    vhost: () => apply(vhostKind, vhost, { name: vhost, ...ref }),
    async triple(i: number) {
      await apply(queueKind, `${vhost}-q-${i}`, { name: `q-${i}`, vhost, ...ref });
      await apply(exchangeKind, `${vhost}-x-${i}`, { name: `x-${i}`, vhost, type: "direct", ...ref });
      await apply(bindingKind, `${vhost}-b-${i}`, {
        vhost,
        source: `x-${i}`,
        destination: `q-${i}`,
        destinationType: "queue",
        ...ref,
      });
    },
  };
}

/**
 * N Queues, Exchanges and Bindings under one Vhost in the World's ControlPlane namespace, served by
 * the running operator: ms until all are Ready, and `counters` as they were then (before the clean-up,
 * which deletes the objects and does not wait for them to go).
 */
export async function topologyAlone<C>(
  rest: KubeRest,
  w: World,
  n: number,
  counters: () => Promise<C>,
  signal?: AbortSignal,
): Promise<{ ms: number; applyMs: number; counters: C }> {
  const ns = w.cpNs;
  const vhost = `bench-topology-${randomBytes(3).toString("hex")}`;
  const load = topologyLoad(rest, ns, vhost);
  const selector = load.selector;
  const vhostReady = new ReadyWatch(rest, [vhostKind], ns, selector);
  const ready = new ReadyWatch(rest, [queueKind, exchangeKind, bindingKind], ns, selector);
  try {
    await load.vhost();
    await vhostReady.until(1, 120_000, signal);
    let applyMs = 0;
    const ms = await timed(async () => {
      const applying = performance.now();
      await inParallel(range(n), 16, (i) => load.triple(i));
      applyMs = performance.now() - applying;
      await ready.until(3 * n, 60 * 60_000, signal);
    });
    return { ms, applyMs, counters: await counters() };
  } finally {
    await Promise.all([vhostReady.stop(), ready.stop()]);
    // Clean-up: the vhost goes on the broker first (with everything in it), so each object's deletion
    // finds its broker object gone at once.
    await brokerClient(w.broker, 1).delete(brokerPath("vhosts", vhost));
    for (const kind of [bindingKind, exchangeKind, queueKind, vhostKind]) {
      await rest.request("DELETE", apiPath(kind, ns), { query: { labelSelector: selector } });
    }
  }
}
