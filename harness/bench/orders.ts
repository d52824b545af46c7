// The benchmark's orders: created at once in the tenant namespace, and counted from a watch (an
// informer) to see how many are Ready, switched to a generation, swept, or gone. Listing a thousand
// orders every second would be load on the API server that the operator under test pays for.
import { pino } from "pino";
import type { RabbitMQVhost } from "../../src/api/index.ts";
import { rabbitMQVhostKind, secretKind } from "../../src/api/index.ts";
import { deliveredSecretName } from "../../src/orders/core/naming.ts";
import { userName } from "../../src/orders/rabbitmq/naming.ts";
import { realClock } from "../../src/runtime/base/clock.ts";
import { Informer } from "../../src/runtime/port/informer.ts";
import { apiPath, type KubeList, type KubeRest } from "../../src/runtime/port/kube-rest.ts";
import { inParallel, sleep } from "./concurrency.ts";

export interface OrderSet {
  rest: KubeRest;
  namespace: string;
  controlPlane: { name: string; namespace: string };
  names: string[];
  gracePeriod: string;
  /** The orders' spec.rotation; default no schedule (interval 0s) and `gracePeriod`. */
  rotation?: Record<string, unknown>;
}

const TENANT = "vhost-broker-bench-tenant";

/** Applies every order (the tenant's server-side apply) with generation `generation`. */
export async function applyOrders(orders: OrderSet, generation: number, concurrency = 16): Promise<void> {
  const { rest, namespace } = orders;
  await inParallel(orders.names, concurrency, async (name) => {
    await rest.request("PATCH", apiPath(rabbitMQVhostKind, namespace, name), {
      query: { fieldManager: TENANT, force: true },
      contentType: "application/apply-patch+yaml",
      body: {
        apiVersion: rabbitMQVhostKind.apiVersion,
        kind: rabbitMQVhostKind.kind,
        metadata: { name, namespace },
        spec: {
          controlPlaneRef: orders.controlPlane,
          passwordGeneration: generation,
          // The vhost goes with the order, so that runs leave nothing on the broker.
          deletionPolicy: "Delete",
          rotation: orders.rotation ?? { interval: "0s", gracePeriod: orders.gracePeriod },
        },
      },
    });
  });
}

async function listAll(rest: KubeRest, path: string): Promise<KubeList["items"]> {
  const items: KubeList["items"] = [];
  let next: string | undefined;
  do {
    const page = await rest.request<KubeList>("GET", path, { query: { limit: 500, continue: next } });
    items.push(...page.items);
    next = page.metadata?.continue || undefined;
  } while (next);
  return items;
}

export interface OrderCensus {
  total: number;
  ready: number;
  /** Ready, on at least `generation`, and its delivered Secret names that generation's user. */
  delivered: number;
  /** Holding no superseded generation any more. */
  swept: number;
}

/** The orders of one namespace as a watch reports them. */
export class OrderWatch {
  private readonly informer: Informer;

  constructor(rest: KubeRest, namespace: string) {
    this.informer = new Informer({
      rest,
      kind: rabbitMQVhostKind,
      namespace,
      clock: realClock,
      log: pino({ level: "warn" }),
      resyncMs: 0,
      watchRestartMs: 5 * 60_000,
    });
    this.informer.start();
  }

  /**
   * The orders of the set as the watch has them (and the delivered Secrets, listed once, when
   * `generation` is given and every order has switched). Waits for the first list: an unsynced cache
   * would count every order as gone.
   */
  async census(orders: OrderSet, generation?: number, signal?: AbortSignal): Promise<OrderCensus> {
    while (!this.informer.synced()) await sleep(50, signal);
    return countOrders(orders, this.informer.list() as RabbitMQVhost[], generation);
  }

  /** The orders of the set as the watch has them, after its first list. */
  async orders(orders: OrderSet, signal?: AbortSignal): Promise<RabbitMQVhost[]> {
    while (!this.informer.synced()) await sleep(50, signal);
    const mine = new Set(orders.names);
    return (this.informer.list() as RabbitMQVhost[]).filter((o) => mine.has(o.metadata?.name ?? ""));
  }

  stop(): Promise<void> {
    return this.informer.stop();
  }
}

async function countOrders(
  orders: OrderSet,
  list: RabbitMQVhost[],
  generation: number | undefined,
): Promise<OrderCensus> {
  const { rest, namespace } = orders;
  const mine = new Set(orders.names);
  const found = list.filter((o) => mine.has(o.metadata?.name ?? ""));
  const isReady = (o: RabbitMQVhost) =>
    o.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
  let delivered = 0;
  const switched = (o: RabbitMQVhost) =>
    isReady(o) && (o.status?.passwordGeneration ?? 0) >= (generation ?? 0);
  // The Secrets are listed only once every order has switched: a poll must not load the API server.
  if (generation !== undefined && found.length === orders.names.length && found.every(switched)) {
    const secrets = await listAll(rest, apiPath(secretKind, namespace));
    const users = new Map(
      secrets.map((s) => [
        s.metadata?.name ?? "",
        Buffer.from(
          ((s["data"] as Record<string, string> | undefined) ?? {})["username"] ?? "",
          "base64",
        ).toString(),
      ]),
    );
    for (const o of found) {
      const name = o.metadata?.name ?? "";
      const key = { cluster: "", namespace, name };
      const live = o.status?.passwordGeneration ?? 0;
      if (
        isReady(o) &&
        live >= generation &&
        users.get(deliveredSecretName({ name })) === userName(key, live)
      ) {
        delivered++;
      }
    }
  }
  return {
    total: found.length,
    ready: found.filter(isReady).length,
    delivered,
    swept: found.filter((o) => isReady(o) && !o.status?.previousPasswordGeneration).length,
  };
}

/** Deletes every order of the set (the operator tears them down). */
export async function deleteOrders(orders: OrderSet, concurrency = 16): Promise<void> {
  const { rest, namespace } = orders;
  await inParallel(orders.names, concurrency, async (name) => {
    await rest.request("DELETE", apiPath(rabbitMQVhostKind, namespace, name)).catch((error: unknown) => {
      if ((error as { code?: number }).code !== 404) throw error;
    });
  });
}

/** Whether one order reads Ready: a GET, for a single order timed alone (a watch would be more load). */
export async function orderIsReady(orders: OrderSet, name: string): Promise<boolean> {
  const path = apiPath(rabbitMQVhostKind, orders.namespace, name);
  const order = await orders.rest.request<RabbitMQVhost>("GET", path).catch(() => undefined);
  return order?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
}
