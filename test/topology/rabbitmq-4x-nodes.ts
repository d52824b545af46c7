// The local RabbitMQ nodes the 4.x files run against: `rabbitmq` (4.3), `rabbitmq-40` (4.0) and, where
// 3.x differs, `rabbitmq-2` (3.10), each behind a RabbitmqCluster stand-in on the real management
// cluster that points at the node through a pass-through proxy counting the requests
// (broker-proxy.ts); and the controller deps, reads and checks those files share. A file calls
// setUpNodes() before its tests and tearDownNodes() after them; the state is the file's own.
import * as k8s from "@kubernetes/client-node";
import { pino } from "pino";
import { expect } from "vitest";
import { z } from "zod";
import { createManagedBus, installCrds } from "../../harness/world/managed-bus.ts";
import { topologyKinds, vhostKind, type KindRef } from "../../src/api/index.ts";
import { externalEvents } from "../../src/operator/external-events.ts";
import { realClock } from "../../src/runtime/base/clock.ts";
import { EventRecorder } from "../../src/runtime/port/events.ts";
import { KubeRest } from "../../src/runtime/port/kube-rest.ts";
import { RestKube } from "../../src/runtime/port/rest-kube.ts";
import { apiPath, type ManagementClient } from "../../src/topology/broker/index.ts";
import { createControllerDeps, type ControllerDeps, topologyKind } from "../../src/topology/index.ts";
import { localEnv } from "../../harness/world/env.ts";
import { eventually, freshNamespace } from "../../harness/world/kube.ts";
import { BrokerProxy } from "./broker-proxy.ts";
import {
  clients,
  cluster,
  condition,
  createResource,
  getResource,
  settle,
  tearDownNamespace,
  testSettings,
  unique,
  type Reconcile,
} from "./controller-harness.ts";
import { serveEverything } from "./ownership.ts";

const env = localEnv();
export const finalizer = "deletion.finalizers.vhosts.rabbitmq.com";
const logLines: string[] = [];
const logger = pino(
  { level: "debug", base: undefined },
  { write: (line: string) => void logLines.push(line) },
);
const rest = new KubeRest(cluster.kubeconfig);
const events = cluster.config.makeApiClient(k8s.EventsV1Api);

export interface Node {
  /** The RabbitmqCluster stand-in that points at it. */
  cluster: string;
  version: string;
  /** The major.minor the environment promises (env.sh), checked against what the node reports. */
  line: string;
  managementUrl: string;
  amqpUrl: string;
  username: string;
  password: string;
  proxy?: BrokerProxy;
  /** The node's administrator, straight (not through the proxy): the test's own reads and changes. */
  admin?: ManagementClient;
}

export type NodeName = "v43" | "v40" | "v310";
export const nodes: Record<NodeName, Node> = {
  v43: {
    cluster: "rabbitmq",
    version: env.RABBITMQ_VERSION,
    line: "4.3",
    managementUrl: env.RABBITMQ_MANAGEMENT_URL,
    amqpUrl: env.RABBITMQ_URL,
    username: env.RABBITMQ_ADMIN_USERNAME,
    password: env.RABBITMQ_ADMIN_PASSWORD,
  },
  v40: {
    cluster: "rabbitmq-40",
    version: env.RABBITMQ_40_VERSION,
    line: "4.0",
    managementUrl: env.RABBITMQ_40_MANAGEMENT_URL,
    amqpUrl: env.RABBITMQ_40_URL,
    username: env.RABBITMQ_40_ADMIN_USERNAME,
    password: env.RABBITMQ_40_ADMIN_PASSWORD,
  },
  v310: {
    cluster: "rabbitmq-310",
    version: env.RABBITMQ_2_VERSION,
    line: "3.10",
    managementUrl: env.RABBITMQ_2_MANAGEMENT_URL,
    amqpUrl: env.RABBITMQ_2_URL,
    username: env.RABBITMQ_2_ADMIN_USERNAME,
    password: env.RABBITMQ_2_ADMIN_PASSWORD,
  },
};
export const allNodes = Object.keys(nodes) as NodeName[];

/** The file's namespace, set by setUpNodes(). */
export let namespace = "";
/** Vhosts this file made on each node, removed at the end (protection lifted first on 4.3). */
export const made: { node: NodeName; vhost: string }[] = [];

export const proxy = (node: NodeName) => nodes[node].proxy as BrokerProxy;
export const admin = (node: NodeName) => nodes[node].admin as ManagementClient;
export const ref = (node: NodeName) => ({ rabbitmqClusterReference: { name: nodes[node].cluster } });

const versionAnswer = z.looseObject({ rabbitmq_version: z.string(), management_version: z.string() });
export const vhostAnswer = z.looseObject({
  name: z.string(),
  tags: z.array(z.string()),
  default_queue_type: z.string().optional(),
  protected_from_deletion: z.boolean().optional(),
  metadata: z.looseObject({}).optional(),
});
export const queueAnswer = z.looseObject({
  type: z.string(),
  durable: z.boolean(),
  arguments: z.record(z.string(), z.unknown()),
});
export const policyAnswer = z.looseObject({ definition: z.record(z.string(), z.unknown()) });
const featureAnswer = z.looseObject({
  name: z.string(),
  deprecation_phase: z.string(),
  state: z.string().optional(),
});
export const featuresAnswer = z.array(featureAnswer);

/** The CRDs, the file's namespace, each node checked against its line and given its proxy. */
export async function setUpNodes(): Promise<void> {
  await installCrds(cluster.config);
  namespace = await freshNamespace(cluster, "topo-4x");
  for (const node of Object.values(nodes) as Node[]) {
    node.admin = clients.client({
      url: node.managementUrl,
      username: node.username,
      password: node.password,
    });
    const overview = await node.admin.get("/api/overview", versionAnswer);
    if (
      !overview.rabbitmq_version.startsWith(`${node.line}.`) ||
      overview.rabbitmq_version !== node.version
    ) {
      throw new Error(
        `the node behind ${node.cluster} runs RabbitMQ ${overview.rabbitmq_version}; this file expects ${node.line}.x (env.sh says ${node.version})`,
      );
    }
    node.proxy = await BrokerProxy.start(node.managementUrl);
    const amqp = new URL(node.amqpUrl);
    await createManagedBus(
      cluster.config,
      namespace,
      {
        amqpHost: amqp.hostname,
        amqpPort: Number(amqp.port || 5672),
        managementUrl: node.proxy.url,
        adminUsername: node.username,
        adminPassword: node.password,
      },
      node.cluster,
    );
  }
}

/** The namespace, the vhosts the file made (4.3's protection lifted first) and the proxies. */
export async function tearDownNodes(): Promise<void> {
  if (namespace) await tearDownNamespace(namespace, topologyKinds);
  for (const { node, vhost } of made) {
    if (node === "v43")
      await admin(node)
        .delete(apiPath("vhosts", vhost, "deletion", "protection"))
        .catch(() => undefined);
    await admin(node)
      .delete(apiPath("vhosts", vhost))
      .catch(() => undefined);
  }
  for (const node of Object.values(nodes) as Node[]) await node.proxy?.close();
}

/** Log lines of the file's controllers that hold an administrator password: none is the promise. */
export function passwordsInLogs(): string[] {
  const passwords = allNodes.map((node) => nodes[node].password);
  return logLines.filter((line) => passwords.some((p) => line.includes(p)));
}

/** Deps as the operator builds them: transitions recorded as events.k8s.io Events. */
export function makeDeps(): ControllerDeps {
  const recorder = new EventRecorder({
    controller: "c5c3.io/vhost-broker",
    instance: "rabbitmq-4x-itest",
    clock: realClock,
    log: logger,
  });
  return createControllerDeps(new RestKube(rest), {
    ownership: serveEverything,
    logger,
    clients,
    settings: testSettings,
    events: externalEvents(recorder, rest),
  });
}

export async function eventAbout(name: string, reason: string): Promise<k8s.EventsV1Event> {
  return eventually(`an Event ${reason} about ${name}`, async () => {
    const list = await events.listNamespacedEvent({ namespace });
    return list.items.find((e) => e.regarding?.name === name && e.reason === reason);
  });
}

/** A Vhost object on `node`, Ready; its broker vhost is removed after the file. */
export async function readyVhost(
  deps: ControllerDeps,
  node: NodeName,
  what: string,
  spec: Record<string, unknown> = {},
): Promise<string> {
  const name = unique(what);
  made.push({ node, vhost: name });
  await createResource(vhostKind, namespace, name, { name, ...spec, ...ref(node) });
  expect((await settle(topologyKind.vhost, deps, namespace, name)).terminal).toBeUndefined();
  expect(condition(await getResource(vhostKind, namespace, name), "Ready")).toMatchObject({ status: "True" });
  return name;
}

export async function expectReady(kind: KindRef, name: string): Promise<void> {
  const ready = condition(await getResource(kind, namespace, name), "Ready");
  expect(ready, `${kind.kind} ${name}: ${ready?.message}`).toMatchObject({ status: "True" });
}

/**
 * The Ready condition of a refused object: False, its reason, and the message; the generation the
 * broker last took stays observed (none, for an object never declared).
 */
export async function refusedCondition(
  kind: KindRef,
  name: string,
  reason: string,
  observedGeneration?: number,
): Promise<string> {
  const resource = await getResource(kind, namespace, name);
  const ready = condition(resource, "Ready");
  expect(ready).toMatchObject({ status: "False", reason });
  expect(resource?.status?.observedGeneration).toBe(observedGeneration);
  return ready?.message ?? "";
}

/** Lets the verification period pass, then reconciles until settled: the pass reads the broker back. */
export async function afterVerification(
  reconcile: Reconcile,
  deps: ControllerDeps,
  name: string,
): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, deps.settings.verificationPeriodMs + 200));
  expect((await settle(reconcile, deps, namespace, name)).terminal).toBeUndefined();
}
