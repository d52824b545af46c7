// The floors: what the broker and the API server do for N orders when nothing but the benchmark asks,
// at the best of a few concurrencies. The broker's: per order a vhost, a user and its permission,
// straight through the management API (the same bodies the topology controller sends, the password
// hashed here as it hashes it). The API server's: per order the writes an order needs (the recipe
// below), on objects in a namespace of their own that no operator watches while the floor runs.
import { randomBytes } from "node:crypto";
import {
  permissionKind,
  rabbitMQVhostKind,
  secretKind,
  userKind,
  vhostKind,
  type KindRef,
} from "../../src/api/index.ts";
import {
  ManagementClients,
  apiPath,
  declareBinding,
  declareExchange,
  declareQueue,
  permissionBody,
  userBody,
  vhostBody,
  type ManagementClient,
} from "../../src/topology/broker/index.ts";
import { apiPath as kubePath, type KubeRest } from "../../src/runtime/port/kube-rest.ts";
import type { LocalBroker } from "../world/managed-bus.ts";
import { inParallel, range, timed } from "./concurrency.ts";
import { cpuSnapshot, machineCpu, type MachineCpu } from "./machine.ts";

export interface Floor {
  /** The concurrency of the fastest run, and its time for all N. */
  concurrency: number;
  ms: number;
  /** Requests of the full run. */
  requests: number;
  /** Time of the sample at each concurrency tried. */
  tried: { concurrency: number; ms: number; items: number }[];
  /** The machine's CPU during the full run (no operator runs during a floor). */
  machine: MachineCpu;
}

/**
 * The broker's cost of a vhost against the vhosts it holds: the same small batch (vhost, user and
 * permission each) at concurrency 1 on the broker before the floor, and again while it holds the floor's
 * N. On RabbitMQ 3.10 the second is many times the first, so that the floor grows faster than N.
 */
export interface VhostGrowth {
  items: number;
  concurrency: number;
  /** Vhosts the broker held before each batch (other tests' included) and the batch's time. */
  emptyHeld: number;
  emptyMs: number;
  held: number;
  heldMs: number;
}

/** The broker's floor, with the growth of its cost per vhost. */
export interface BrokerFloor extends Floor {
  growth: VhostGrowth;
}

/** The items of the growth measurement's batch, and its concurrency. */
export const GROWTH_ITEMS = 40;
const GROWTH_CONCURRENCY = 1;

/**
 * Tries each concurrency on `sample` items (a fresh batch each), then runs all `n` at the fastest, with
 * the machine's CPU read around that run. `cleanUp` runs after each batch, untimed, also after a batch
 * that `signal` stopped; then the abort is thrown.
 */
async function bestOf(
  n: number,
  sample: number,
  levels: number[],
  requestsPerItem: number,
  batch: (items: number[], concurrency: number) => Promise<() => Promise<void>>,
  signal: AbortSignal | undefined,
  whileHeld?: () => Promise<void>,
): Promise<Floor> {
  const tried: Floor["tried"] = [];
  const items = Math.min(n, sample);
  for (const concurrency of levels) {
    let cleanUp: () => Promise<void> = async () => undefined;
    const ms = await timed(async () => {
      cleanUp = await batch(range(items), concurrency);
    });
    await cleanUp();
    signal?.throwIfAborted();
    tried.push({ concurrency, ms, items });
  }
  const best = tried.reduce((a, b) => (b.ms < a.ms ? b : a));
  // All n at the fastest, once more when the sample was all of them: its machine figure is this run's.
  let cleanUp: () => Promise<void> = async () => undefined;
  const before = cpuSnapshot();
  const ms = await timed(async () => {
    cleanUp = await batch(range(n), best.concurrency);
  });
  const machine = machineCpu(before, cpuSnapshot(), 0);
  try {
    if (!signal?.aborted) await whileHeld?.();
  } finally {
    await cleanUp();
  }
  signal?.throwIfAborted();
  return { concurrency: best.concurrency, ms, requests: n * requestsPerItem, tried, machine };
}

export function brokerClient(broker: LocalBroker, connections: number): ManagementClient {
  return new ManagementClients({ connectionsPerBroker: connections, requestTimeoutMs: 60_000 }).client({
    url: broker.managementUrl,
    username: broker.adminUsername,
    password: broker.adminPassword,
  });
}

/**
 * N vhosts, users and permissions through the management API; and the growth of their cost: a batch of
 * GROWTH_ITEMS before the trials, and the same again while the broker holds the full run's N.
 */
export async function brokerFloor(
  broker: LocalBroker,
  n: number,
  sample: number,
  levels: number[],
  signal?: AbortSignal,
  held: (broker: LocalBroker) => Promise<number> = async () => NaN,
): Promise<BrokerFloor> {
  const run = randomBytes(3).toString("hex");
  let round = 0;
  const batch = async (items: number[], concurrency: number) => {
    const client = brokerClient(broker, concurrency);
    const names = items.map((i) => `bench-floor-${run}-${round}-${i}`);
    round++;
    let cleaned = false;
    const cleanUp = async () => {
      if (cleaned) return;
      cleaned = true;
      const cleaner = brokerClient(broker, 4);
      await inParallel(names, 4, async (vhost) => {
        await cleaner.delete(apiPath("vhosts", vhost));
        await cleaner.delete(apiPath("users", `${vhost}-v1`));
      });
    };
    try {
      await inParallel(
        names,
        concurrency,
        async (vhost) => {
          const user = `${vhost}-v1`;
          await client.put(apiPath("vhosts", vhost), vhostBody({ name: vhost }));
          await client.put(
            apiPath("users", user),
            userBody({ username: user, credentials: { password: randomBytes(24).toString("base64url") } }),
          );
          await client.put(
            apiPath("permissions", vhost, user),
            permissionBody({ vhost, user, permissions: { configure: ".*", write: ".*", read: ".*" } }),
          );
        },
        signal,
      );
    } catch (error) {
      // A batch that failed half-way leaves nothing behind either.
      await cleanUp().catch(() => undefined);
      throw error;
    }
    return cleanUp;
  };
  /** A timed batch of GROWTH_ITEMS at GROWTH_CONCURRENCY, cleaned up after, and the vhosts held before. */
  const growthBatch = async (): Promise<[number, number]> => {
    const before = await held(broker);
    let cleanUp: () => Promise<void> = async () => undefined;
    const ms = await timed(async () => {
      cleanUp = await batch(range(GROWTH_ITEMS), GROWTH_CONCURRENCY);
    });
    await cleanUp();
    return [before, ms];
  };
  const [emptyHeld, emptyMs] = await growthBatch();
  signal?.throwIfAborted();
  let growth: VhostGrowth | undefined;
  const floor = await bestOf(n, sample, levels, 3, batch, signal, async () => {
    const [heldNow, heldMs] = await growthBatch();
    growth = {
      items: GROWTH_ITEMS,
      concurrency: GROWTH_CONCURRENCY,
      emptyHeld,
      emptyMs,
      held: heldNow,
      heldMs,
    };
  });
  if (!growth) throw new Error("the broker floor's growth batch did not run");
  return { ...floor, growth };
}

/** N queues, N exchanges and N bindings (queue i to exchange i) in one fresh vhost. */
export async function topologyBrokerFloor(
  broker: LocalBroker,
  n: number,
  sample: number,
  levels: number[],
  signal?: AbortSignal,
): Promise<Floor> {
  const run = randomBytes(3).toString("hex");
  let round = 0;
  const batch = async (items: number[], concurrency: number) => {
    const vhost = `bench-topology-floor-${run}-${round++}`;
    const setup = brokerClient(broker, 1);
    await setup.put(apiPath("vhosts", vhost), vhostBody({ name: vhost }));
    const client = brokerClient(broker, concurrency);
    await inParallel(
      items,
      concurrency,
      async (i) => {
        await declareQueue(client, { name: `q-${i}`, vhost });
        await declareExchange(client, { name: `x-${i}`, vhost, type: "direct" });
        await declareBinding(client, {
          vhost,
          source: `x-${i}`,
          destination: `q-${i}`,
          destinationType: "queue",
        });
      },
      signal,
    );
    return async () => {
      await setup.delete(apiPath("vhosts", vhost));
    };
  };
  return bestOf(n, sample, levels, 3, batch, signal);
}

/**
 * The writes of one order to the API server, in the order a pass makes them: the tenant's apply of
 * the order; its finalizer; the password Secret (a create); the Vhost, User and Permission applied
 * (the order's apply carries the topology controller's finalizer) and given a status each; the
 * delivered Secret applied; the order's status.
 */
export const API_WRITES_PER_ORDER = 11;

const FLOOR_MANAGER = "vhost-broker-bench-floor";
const apply = "application/apply-patch+yaml";
const merge = "application/merge-patch+json";

async function orderWrites(rest: KubeRest, namespace: string, name: string): Promise<void> {
  const ssa = (kind: KindRef, objectName: string, body: Record<string, unknown>) =>
    rest.request("PATCH", kubePath(kind, namespace, objectName), {
      query: { fieldManager: FLOOR_MANAGER, force: true },
      body: {
        apiVersion: kind.apiVersion,
        kind: kind.kind,
        metadata: { name: objectName, namespace },
        ...body,
      },
      contentType: apply,
    });
  const mark = (kind: KindRef, objectName: string) =>
    rest.request("PATCH", kubePath(kind, namespace, objectName), {
      query: { fieldManager: FLOOR_MANAGER },
      body: { metadata: { annotations: { "bench.vhost-broker/floor": "claimed" } } },
      contentType: merge,
    });
  const status = (kind: KindRef, objectName: string, value: Record<string, unknown>) =>
    rest.request("PATCH", kubePath(kind, namespace, objectName, "status"), {
      query: { fieldManager: FLOOR_MANAGER },
      body: { status: value },
      contentType: merge,
    });
  const ref = { rabbitmqClusterReference: { name: "bench-floor-none" } };
  const ready = {
    conditions: [
      {
        type: "Ready",
        status: "True",
        reason: "SuccessfulCreateOrUpdate",
        lastTransitionTime: new Date().toISOString(),
      },
    ],
  };
  await ssa(rabbitMQVhostKind, name, { spec: { controlPlaneRef: { name: "bench-floor-none" } } });
  await mark(rabbitMQVhostKind, name);
  await rest.request("POST", kubePath(secretKind, namespace), {
    body: {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: `${name}-password-v1`, namespace },
      data: { username: Buffer.from(name).toString("base64"), password: randomBytes(24).toString("base64") },
    },
  });
  const children: [KindRef, string, Record<string, unknown>][] = [
    [vhostKind, `${name}-vhost`, { spec: { name, ...ref } }],
    [
      userKind,
      `${name}-user-v1`,
      { spec: { importCredentialsSecret: { name: `${name}-password-v1` }, ...ref } },
    ],
    [
      permissionKind,
      `${name}-permission-v1`,
      {
        spec: {
          vhost: name,
          user: `${name}-v1`,
          permissions: { configure: ".*", write: ".*", read: ".*" },
          ...ref,
        },
      },
    ],
  ];
  for (const [kind, child, body] of children) await ssa(kind, child, body);
  for (const [kind, child] of children) await status(kind, child, ready);
  await ssa(secretKind, `${name}-credentials`, {
    type: "Opaque",
    stringData: { username: `${name}-v1`, password: randomBytes(24).toString("base64url"), vhost: name },
  });
  await status(rabbitMQVhostKind, name, { passwordGeneration: 1 });
}

/** The API server's floor, in `namespace` (emptied after each batch). */
export async function apiFloor(
  rest: KubeRest,
  namespace: string,
  n: number,
  sample: number,
  levels: number[],
  signal?: AbortSignal,
): Promise<Floor> {
  let round = 0;
  const batch = async (items: number[], concurrency: number) => {
    const prefix = `floor-${round++}`;
    await inParallel(items, concurrency, (i) => orderWrites(rest, namespace, `${prefix}-${i}`), signal);
    return async () => {
      for (const kind of [rabbitMQVhostKind, vhostKind, userKind, permissionKind, secretKind]) {
        await rest.request("DELETE", kubePath(kind, namespace));
      }
    };
  };
  return bestOf(n, sample, levels, API_WRITES_PER_ORDER, batch, signal);
}
