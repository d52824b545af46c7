// The brokers a run measures (`--brokers`): the local environment's RabbitMQ nodes by their part's name
// (scripts/localenv/rabbitmq.sh: `rabbitmq` runs 4.3, `rabbitmq-2` 3.10, `rabbitmq-40` 4.0, the optional
// `rabbitmq-43` 4.3 again), each with
// the version its management API reports, and a ControlPlane whose bus is that broker for the orders of
// its run.
import { localNode } from "../world/local-brokers.ts";
import type { World } from "../world/world.ts";
import { freshNamespace } from "../world/kube.ts";
import { createControlPlane, createManagedBus, type LocalBroker } from "../world/managed-bus.ts";

export const BROKER_PARTS = ["rabbitmq", "rabbitmq-2", "rabbitmq-40", "rabbitmq-43"] as const;
/** The brokers `up` starts: the scale phase's default. */
export const DEFAULT_SCALE_BROKERS = ["rabbitmq", "rabbitmq-2", "rabbitmq-40"] as const;
export type BrokerPart = (typeof BROKER_PARTS)[number];

export const isBrokerPart = (name: string): name is BrokerPart =>
  (BROKER_PARTS as readonly string[]).includes(name);

/** A broker of the run: its part, its RabbitMQ version, and how to reach it. */
export interface BenchBroker {
  part: BrokerPart;
  version: string;
  broker: LocalBroker;
}

/** What the report keeps of a broker (no password). */
export interface BrokerInfo {
  part: BrokerPart;
  version: string;
}

/** How the table names a broker: its version and its part. */
export const brokerLabel = (b: BrokerInfo): string => `RabbitMQ ${b.version} (${b.part})`;

function basicAuth(broker: LocalBroker): string {
  return `Basic ${Buffer.from(`${broker.adminUsername}:${broker.adminPassword}`).toString("base64")}`;
}

/** GET on the broker's management API as its administrator. */
async function managementGet<T>(broker: LocalBroker, path: string): Promise<T> {
  const answer = await fetch(new URL(path, broker.managementUrl), {
    headers: { authorization: basicAuth(broker) },
    signal: AbortSignal.timeout(30_000),
  });
  if (!answer.ok) throw new Error(`GET ${path} on ${broker.managementUrl}: HTTP ${answer.status}`);
  return (await answer.json()) as T;
}

/** The part's node, its version as its management API reports it (the env's when it does not answer). */
export async function benchBroker(part: BrokerPart): Promise<BenchBroker> {
  const node = localNode(part);
  const version = await managementGet<{ rabbitmq_version?: string }>(node.broker, "/api/overview").then(
    (o) => o.rabbitmq_version ?? node.version,
    () => node.version,
  );
  return { part, version: version || "unknown", broker: node.broker };
}

/** How many vhosts the broker holds now (other tests' included: the local environment is shared). */
export async function vhostCount(broker: LocalBroker): Promise<number> {
  return (await managementGet<unknown[]>(broker, "/api/vhosts?columns=name")).length;
}

/**
 * A world of its own on `broker`: a ControlPlane namespace whose bus is that broker, and a tenant
 * namespace it assigns, on the cluster of `w` (what createWorld builds for every test's broker).
 * destroyWorld removes it.
 */
export async function worldOn(w: World, prefix: string, broker: LocalBroker): Promise<World> {
  const cpNs = await freshNamespace(w.cluster, `${prefix}-cp`);
  const tenantNs = await freshNamespace(w.cluster, `${prefix}-tenant`);
  await createManagedBus(w.cluster.config, cpNs, broker);
  await createControlPlane(w.cluster.config, cpNs, "cp", [{ namespace: tenantNs }]);
  return { ...w, broker, cpNs, tenantNs, controlPlane: { name: "cp", namespace: cpNs } };
}

/** What the report keeps of a broker. */
export const benchBrokerInfo = (b: BenchBroker): BrokerInfo => ({ part: b.part, version: b.version });
