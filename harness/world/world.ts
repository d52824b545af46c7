// A fresh world for one end-to-end file run against the operator process: the CRDs, a ControlPlane
// namespace with the managed-bus stand-in and a ControlPlane `cp`, and a tenant namespace it assigns on
// the management cluster. The clean-up deletes the orders first and waits until the running operator has
// torn them down; only if it does not in time are finalizers stripped, so that nothing stays behind, and
// the clean-up then fails to say so.
import * as k8s from "@kubernetes/client-node";
import type { RabbitMQVhost } from "../../src/api/index.ts";
import { userChildName, vhostName } from "../../src/orders/rabbitmq/naming.ts";
import {
  createControlPlane,
  createManagedBus,
  installCrds,
  localBrokerFromEnv,
  type LocalBroker,
} from "./managed-bus.ts";
import { localEnv } from "./env.ts";
import { eventually, freshNamespace, isApiError, testCluster, type TestCluster } from "./kube.ts";

export interface World {
  cluster: TestCluster;
  custom: k8s.CustomObjectsApi;
  broker: LocalBroker;
  cpNs: string;
  tenantNs: string;
  controlPlane: { name: string; namespace: string };
}

const order = { group: "c5c3.io", version: "v1alpha1", plural: "rabbitmqvhosts" } as const;

/**
 * A ControlPlane with its bus and one assigned tenant namespace on the management cluster.
 * `broker` is the bus's broker (default: every test's, `rabbitmq`); `brokerManagementUrl` is the
 * management API the RabbitmqCluster's connection annotation names (a proxy), instead of the broker's.
 */
export async function createWorld(
  prefix: string,
  options: { broker?: LocalBroker; brokerManagementUrl?: string } = {},
): Promise<World> {
  const cluster = testCluster("management");
  await installCrds(cluster.config);
  const broker = options.broker ?? localBrokerFromEnv(localEnv() as unknown as NodeJS.ProcessEnv);
  const cpNs = await freshNamespace(cluster, `${prefix}-cp`);
  const tenantNs = await freshNamespace(cluster, `${prefix}-tenant`);
  await createManagedBus(cluster.config, cpNs, {
    ...broker,
    managementUrl: options.brokerManagementUrl ?? broker.managementUrl,
  });
  await createControlPlane(cluster.config, cpNs, "cp", [{ namespace: tenantNs }]);
  return {
    cluster,
    custom: cluster.config.makeApiClient(k8s.CustomObjectsApi),
    broker,
    cpNs,
    tenantNs,
    controlPlane: { name: "cp", namespace: cpNs },
  };
}

/** Creates or updates an order in the tenant namespace, as its tenant would (server-side apply). */
export async function applyOrder(world: World, name: string, spec: Record<string, unknown>): Promise<void> {
  await applyOrderIn(world.cluster, world.tenantNs, name, { controlPlaneRef: world.controlPlane, ...spec });
}

/** Creates or updates the order `namespace/name` on any cluster, as its tenant would (server-side apply). */
export async function applyOrderIn(
  cluster: TestCluster,
  namespace: string,
  name: string,
  spec: Record<string, unknown>,
): Promise<void> {
  await cluster.config.makeApiClient(k8s.CustomObjectsApi).patchNamespacedCustomObject(
    {
      ...order,
      namespace,
      name,
      body: { apiVersion: "c5c3.io/v1alpha1", kind: "RabbitMQVhost", metadata: { name, namespace }, spec },
      fieldManager: "e2e-tenant",
      force: true,
    },
    k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.ServerSideApply),
  );
}

/** The order `namespace/name` on any cluster, or undefined when it does not exist. */
export async function readOrderIn(
  cluster: TestCluster,
  namespace: string,
  name: string,
): Promise<RabbitMQVhost | undefined> {
  try {
    return (await cluster.config
      .makeApiClient(k8s.CustomObjectsApi)
      .getNamespacedCustomObject({ ...order, namespace, name })) as RabbitMQVhost;
  } catch (error) {
    if (isApiError(error, 404)) return undefined;
    throw error;
  }
}

/** Waits until `done` holds for the order; a timeout names what it waited for and the last conditions. */
export async function waitForOrderIn(
  cluster: TestCluster,
  namespace: string,
  name: string,
  what: string,
  done: (o: RabbitMQVhost | undefined) => boolean,
  timeoutMs = 60_000,
): Promise<RabbitMQVhost | undefined> {
  let last: RabbitMQVhost | undefined;
  try {
    return await eventually(
      what,
      async () => {
        last = await readOrderIn(cluster, namespace, name);
        return done(last) ? { order: last } : undefined;
      },
      timeoutMs,
      250,
    ).then((r) => r.order);
  } catch (error) {
    const conditions = last?.status?.conditions?.map(
      (c) => `${c.type}=${c.status}/${c.reason}: ${c.message}`,
    );
    throw new Error(`${(error as Error).message}; last conditions: ${JSON.stringify(conditions)}`, {
      cause: error,
    });
  }
}

export const readOrder = (world: World, name: string) => readOrderIn(world.cluster, world.tenantNs, name);

export const waitForOrder = (
  world: World,
  name: string,
  what: string,
  done: (o: RabbitMQVhost | undefined) => boolean,
  timeoutMs = 60_000,
) => waitForOrderIn(world.cluster, world.tenantNs, name, what, done, timeoutMs);

export const condition = (o: RabbitMQVhost | undefined, type: string) =>
  o?.status?.conditions?.find((c) => c.type === type);

export const isReady = (o: RabbitMQVhost | undefined): boolean => condition(o, "Ready")?.status === "True";

const decode = (v: string | undefined): string => (v ? Buffer.from(v, "base64").toString("utf8") : "");

/** A Secret's data, decoded. */
export async function readSecret(
  world: World,
  namespace: string,
  name: string,
): Promise<Record<string, string>> {
  const secret = await world.cluster.core.readNamespacedSecret({ namespace, name });
  return Object.fromEntries(Object.entries(secret.data ?? {}).map(([k, v]) => [k, decode(v)]));
}

/** A rabbitmq.com child as listed: its name and the status its topology controller wrote. */
export interface TopologyChild {
  metadata: {
    name: string;
    deletionTimestamp?: string;
    finalizers?: string[];
    annotations?: Record<string, string>;
  };
  status?: { observedGeneration?: number; conditions?: { type: string; status: string; reason?: string }[] };
}

/** The order's rabbitmq.com children of one kind in the ControlPlane namespace. */
export async function orderChildren(
  world: World,
  orderName: string,
  plural: string,
): Promise<TopologyChild[]> {
  const list = (await world.custom.listNamespacedCustomObject({
    group: "rabbitmq.com",
    version: "v1beta1",
    plural,
    namespace: world.cpNs,
    labelSelector: `c5c3.io/rabbitmqvhost-name=${orderName},c5c3.io/rabbitmqvhost-namespace=${world.tenantNs}`,
  })) as { items: TopologyChild[] };
  return list.items;
}

/** The names of the order's rabbitmq.com children of one kind in the ControlPlane namespace. */
export async function childNames(world: World, orderName: string, plural: string): Promise<string[]> {
  return (await orderChildren(world, orderName, plural)).map((i) => i.metadata.name).sort();
}

/** When the order's User child of `generation` was created (ms, second precision). */
export async function userChildCreated(world: World, orderName: string, generation: number): Promise<number> {
  const user = (await world.custom.getNamespacedCustomObject({
    group: "rabbitmq.com",
    version: "v1beta1",
    plural: "users",
    namespace: world.cpNs,
    name: userChildName({ cluster: "", namespace: world.tenantNs, name: orderName }, generation),
  })) as { metadata?: { creationTimestamp?: string | Date } };
  return new Date(user.metadata?.creationTimestamp ?? NaN).getTime();
}

/** Every event in the world's two namespaces, as stored (their notes are what users read). */
export async function worldEvents(world: World): Promise<k8s.CoreV1Event[]> {
  const lists = await Promise.all(
    [world.tenantNs, world.cpNs].map((namespace) => world.cluster.core.listNamespacedEvent({ namespace })),
  );
  return lists.flatMap((l) => l.items);
}

/** The world's broker's management API, as its administrator. */
export function brokerApi(world: World, method: string, path: string): Promise<Response> {
  return managementApi(world.broker, method, path);
}

/** A local broker's management API, as its administrator; `body` is sent as JSON. */
export function managementApi(
  broker: LocalBroker,
  method: string,
  path: string,
  body?: unknown,
): Promise<Response> {
  const auth = Buffer.from(`${broker.adminUsername}:${broker.adminPassword}`).toString("base64");
  return fetch(new URL(path, broker.managementUrl), {
    method,
    headers: { authorization: `Basic ${auth}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/**
 * Deletes every order and waits (while the operator still runs) until they are gone; then removes the
 * vhosts a Retain deletion keeps and the two namespaces. Throws at the end if the operator did not tear an
 * order down in time, after forcing the clean-up.
 */
export async function destroyWorld(world: World | undefined, timeoutMs = 60_000): Promise<void> {
  if (!world) return;
  const { custom, tenantNs, cpNs } = world;
  const list = (await custom.listNamespacedCustomObject({ ...order, namespace: tenantNs })) as {
    items: RabbitMQVhost[];
  };
  const names = list.items.map((o) => o.metadata?.name ?? "");
  for (const name of names) {
    await custom.deleteNamespacedCustomObject({ ...order, namespace: tenantNs, name }).catch(ignore404);
  }
  let failure: Error | undefined;
  try {
    await eventually(
      `the operator to tear down ${names.join(", ")}`,
      async () => {
        const left = (await custom.listNamespacedCustomObject({ ...order, namespace: tenantNs })) as {
          items: unknown[];
        };
        return left.items.length === 0 ? true : undefined;
      },
      timeoutMs,
      500,
    );
  } catch (error) {
    failure = error as Error;
    await stripFinalizers(world, names);
  }
  for (const name of names) {
    const vhost = vhostName({ cluster: "", namespace: tenantNs, name });
    await (await brokerApi(world, "DELETE", `/api/vhosts/${encodeURIComponent(vhost)}`)).arrayBuffer();
    if (failure) await deleteBrokerUsers(world, `${vhost}-v`);
  }
  for (const ns of [tenantNs, cpNs]) await world.cluster.core.deleteNamespace({ name: ns }).catch(ignore404);
  if (failure) throw failure;
}

/** The forced path: lets go of the orders and of their rabbitmq.com children, so the namespaces can go. */
async function stripFinalizers(world: World, names: string[]): Promise<void> {
  const patch = { metadata: { finalizers: null } };
  const merge = k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch);
  for (const name of names) {
    await world.custom
      .patchNamespacedCustomObject({ ...order, namespace: world.tenantNs, name, body: patch }, merge)
      .catch(ignore404);
  }
  for (const plural of ["permissions", "users", "vhosts"]) {
    const list = (await world.custom.listNamespacedCustomObject({
      group: "rabbitmq.com",
      version: "v1beta1",
      plural,
      namespace: world.cpNs,
    })) as { items: { metadata: { name: string } }[] };
    for (const item of list.items) {
      await world.custom
        .patchNamespacedCustomObject(
          {
            group: "rabbitmq.com",
            version: "v1beta1",
            plural,
            namespace: world.cpNs,
            name: item.metadata.name,
            body: patch,
          },
          merge,
        )
        .catch(ignore404);
    }
  }
}

async function deleteBrokerUsers(world: World, prefix: string): Promise<void> {
  const users = (await (await brokerApi(world, "GET", "/api/users")).json()) as { name: string }[];
  for (const user of users.filter((u) => u.name.startsWith(prefix))) {
    await (await brokerApi(world, "DELETE", `/api/users/${encodeURIComponent(user.name)}`)).arrayBuffer();
  }
}

function ignore404(error: unknown): void {
  if (!isApiError(error, 404)) throw error;
}
