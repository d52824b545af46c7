// A world for the multicluster end-to-end tests. On the target cluster: the chart
// deploy/target-cluster-access rendered by `helm template` and applied with the admin kubeconfig, and
// tenant namespaces. On the management cluster: the managed-bus stand-in, a ControlPlane assigning the
// tenant namespaces on the target cluster, and a kubeconfig Secret registering the target cluster built
// from the chart's ServiceAccount token, so the operator works there with exactly the chart's RBAC.
import * as k8s from "@kubernetes/client-node";
import type { RabbitMQVhost } from "../../src/api/index.ts";
import { vhostName } from "../../src/orders/rabbitmq/naming.ts";
import { condition, isReady, readOrderIn as readOrder, waitForOrderIn as waitForOrder } from "./world.ts";
import {
  createControlPlane,
  createManagedBus,
  installCrds,
  localBrokerFromEnv,
  type Assignment,
  type LocalBroker,
} from "./managed-bus.ts";
import { applyManifest, renderChart } from "../charts/helm.ts";
import { localEnv } from "./env.ts";
import { eventually, freshNamespace, isApiError, testCluster, type TestCluster } from "./kube.ts";

const orderApi = { group: "c5c3.io", version: "v1alpha1", plural: "rabbitmqvhosts" } as const;
const merge = k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch);
const ssa = k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.ServerSideApply);

export interface TargetWorld {
  clusterName: string;
  management: TestCluster;
  target: TestCluster;
  broker: LocalBroker;
  /** Management: the registration Secrets' namespace, the ControlPlane's namespace. */
  secretNs: string;
  cpNs: string;
  /** Target: the chart's release namespace and the namespaces the chart assigns. */
  accessNs: string;
  assigned: string[];
  /** Target namespaces the ControlPlane assigns but the chart does not. */
  unassigned: string[];
  /** Management namespaces the ControlPlane assigns on the management cluster. */
  managementTenants: string[];
  /** Every namespace the ControlPlane assigns, and where. */
  assignments: Assignment[];
  /** The registration's kubeconfig (the ServiceAccount token's), kept out of any message. */
  kubeconfig: string;
}

export interface TargetWorldOptions {
  /** How many target namespaces the ControlPlane assigns but the chart does not (default 0). */
  unassigned?: number;
  /** How many management namespaces the ControlPlane assigns (default 0). */
  managementTenants?: number;
  /** The management API the RabbitmqCluster's connection annotation names (a proxy), instead of the broker's. */
  brokerManagementUrl?: string;
}

const custom = (cluster: TestCluster) => cluster.config.makeApiClient(k8s.CustomObjectsApi);
const times = <T>(n: number, f: (i: number) => Promise<T>) =>
  Promise.all(Array.from({ length: n }, (_, i) => f(i)));

export async function createTargetWorld(
  prefix: string,
  options: TargetWorldOptions = {},
): Promise<TargetWorld> {
  const management = testCluster("management");
  const target = testCluster("target");
  const clusterName = "target-b";
  await installCrds(management.config);
  const broker = localBrokerFromEnv(localEnv() as unknown as NodeJS.ProcessEnv);
  const world: TargetWorld = {
    clusterName,
    management,
    target,
    broker,
    secretNs: await freshNamespace(management, `${prefix}-clusters`),
    cpNs: await freshNamespace(management, `${prefix}-cp`),
    accessNs: await freshNamespace(target, `${prefix}-access`),
    assigned: [await freshNamespace(target, `${prefix}-t0`)],
    unassigned: await times(options.unassigned ?? 0, (i) => freshNamespace(target, `${prefix}-u${i}`)),
    managementTenants: await times(options.managementTenants ?? 0, (i) =>
      freshNamespace(management, `${prefix}-m${i}`),
    ),
    assignments: [],
    kubeconfig: "",
  };
  const onTarget = { name: clusterName };
  world.assignments = [
    ...[...world.assigned, ...world.unassigned].map((namespace) => ({
      namespace,
      targetClusterRef: onTarget,
    })),
    ...world.managementTenants.map((namespace) => ({ namespace })),
  ];
  await createManagedBus(management.config, world.cpNs, {
    ...broker,
    managementUrl: options.brokerManagementUrl ?? broker.managementUrl,
  });
  await createControlPlane(management.config, world.cpNs, "cp", world.assignments);
  await applyAccessChart(world);
  world.kubeconfig = await tokenKubeconfig(target, world.accessNs, clusterName);
  await register(world, { namespaces: world.assigned });
  return world;
}

/** `helm template` of the chart (with its CRD) for the assigned namespaces, applied on the target as its admin. */
async function applyAccessChart(world: TargetWorld): Promise<void> {
  const manifest = await renderChart("target-cluster-access", {
    release: "vhost-broker-access",
    namespace: world.accessNs,
    set: { assignedNamespaces: `{${world.assigned.join(",")}}` },
    includeCrds: true,
  });
  const env = localEnv();
  await applyManifest(env.KUBECTL, env.TARGET_KUBECONFIG, manifest);
  await eventually("the order CRD Established on the target", async () => {
    const crd = await world.target.extensions.readCustomResourceDefinition({
      name: "rabbitmqvhosts.c5c3.io",
    });
    return crd.status?.conditions?.some((c) => c.type === "Established" && c.status === "True")
      ? true
      : undefined;
  });
}

/**
 * A kubeconfig for the target cluster with the token of deploy/target-cluster-access's ServiceAccount
 * (in the release namespace `accessNs`) and the cluster's CA embedded, as docs/target-clusters.md builds it.
 */
export async function tokenKubeconfig(
  target: TestCluster,
  accessNs: string,
  clusterName: string,
): Promise<string> {
  const data = await eventually("the token controller to fill in the ServiceAccount token", async () => {
    const secret = await target.core.readNamespacedSecret({
      namespace: accessNs,
      name: "vhost-broker-token",
    });
    return secret.data?.["token"] && secret.data["ca.crt"] ? secret.data : undefined;
  });
  const server = target.config.getCurrentCluster()?.server ?? "";
  const token = Buffer.from(data["token"] ?? "", "base64").toString("utf8");
  const config = new k8s.KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: clusterName, server, caData: data["ca.crt"], skipTLSVerify: false }],
    users: [{ name: "vhost-broker", token }],
    contexts: [{ name: clusterName, cluster: clusterName, user: "vhost-broker" }],
    currentContext: clusterName,
  });
  return config.exportConfig();
}

/** A client of the target cluster as the operator sees it (the registration's kubeconfig). */
export function operatorView(world: TargetWorld): k8s.KubeConfig {
  const config = new k8s.KubeConfig();
  config.loadFromString(world.kubeconfig);
  return config;
}

/** Writes the registration Secret; `server` replaces the kubeconfig's API server address. */
export async function register(
  world: TargetWorld,
  options: { namespaces: string[]; server?: string },
): Promise<void> {
  const config = operatorView(world);
  if (options.server) {
    config.clusters = config.clusters.map((c) => ({ ...c, server: options.server ?? c.server }));
  }
  await registerCluster(world.management, {
    name: world.clusterName,
    namespace: world.secretNs,
    kubeconfig: config.exportConfig(),
    namespaces: options.namespaces,
  });
}

/** Writes the registration Secret of a target cluster on the management cluster (server-side apply). */
export async function registerCluster(
  management: TestCluster,
  registration: { name: string; namespace: string; kubeconfig: string; namespaces: string[] },
): Promise<void> {
  await management.objects.patch(
    {
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: registration.name,
        namespace: registration.namespace,
        labels: { "sigs.k8s.io/multicluster-runtime-kubeconfig": "true" },
      },
      stringData: { kubeconfig: registration.kubeconfig, namespaces: registration.namespaces.join(",") },
    } as k8s.V1Secret,
    undefined,
    undefined,
    "vhost-broker-e2e",
    true,
    k8s.PatchStrategy.ServerSideApply,
  );
}

/** Publishes (or, with undefined, withdraws) the ControlPlane's messaging endpoint. */
export async function publishEndpoint(world: TargetWorld, endpoint: string | undefined): Promise<void> {
  await createControlPlane(world.management.config, world.cpNs, "cp", world.assignments, {
    ...(endpoint ? { publishedMessagingEndpoint: endpoint } : {}),
  });
}

/** Creates or updates an order as its tenant would, on the target (default) or the management cluster. */
export async function applyOrder(
  world: TargetWorld,
  at: { namespace: string; on?: "target" | "management" },
  name: string,
  spec: Record<string, unknown>,
  annotations: Record<string, string> = {},
): Promise<void> {
  const cluster = at.on === "management" ? world.management : world.target;
  await custom(cluster).patchNamespacedCustomObject(
    {
      ...orderApi,
      namespace: at.namespace,
      name,
      body: {
        apiVersion: "c5c3.io/v1alpha1",
        kind: "RabbitMQVhost",
        metadata: { name, namespace: at.namespace, annotations },
        spec: { controlPlaneRef: { name: "cp", namespace: world.cpNs }, ...spec },
      },
      fieldManager: "e2e-tenant",
      force: true,
    },
    ssa,
  );
}

export async function deleteOrder(
  world: TargetWorld,
  at: { namespace: string; on?: "target" | "management" },
  name: string,
): Promise<void> {
  const cluster = at.on === "management" ? world.management : world.target;
  await custom(cluster).deleteNamespacedCustomObject({ ...orderApi, namespace: at.namespace, name });
}

export { condition, isReady, readOrder, waitForOrder };

/** A Secret's data, decoded, or undefined when it does not exist. */
export async function readSecret(
  cluster: TestCluster,
  namespace: string,
  name: string,
): Promise<{ secret: k8s.V1Secret; data: Record<string, string> } | undefined> {
  try {
    const secret = await cluster.core.readNamespacedSecret({ namespace, name });
    const data = Object.entries(secret.data ?? {}).map(([k, v]) => [
      k,
      Buffer.from(v, "base64").toString("utf8"),
    ]);
    return { secret, data: Object.fromEntries(data) as Record<string, string> };
  } catch (error) {
    if (isApiError(error, 404)) return undefined;
    throw error;
  }
}

/** Objects of one kind in the ControlPlane's namespace labelled with the order (plural "secrets" or rabbitmq.com). */
export async function managementChildren(
  world: TargetWorld,
  order: { cluster: string; namespace: string; name: string },
  plural: string,
): Promise<k8s.KubernetesObject[]> {
  const labelSelector = [
    `c5c3.io/rabbitmqvhost-name=${order.name}`,
    `c5c3.io/rabbitmqvhost-namespace=${order.namespace}`,
    `c5c3.io/rabbitmqvhost-cluster=${order.cluster}`,
  ].join(",");
  if (plural === "secrets") {
    return (await world.management.core.listNamespacedSecret({ namespace: world.cpNs, labelSelector })).items;
  }
  const list = (await custom(world.management).listNamespacedCustomObject({
    group: "rabbitmq.com",
    version: "v1beta1",
    plural,
    namespace: world.cpNs,
    labelSelector,
  })) as { items: k8s.KubernetesObject[] };
  return list.items;
}

/**
 * Deletes every order (target and management) while the operator still runs and waits until they are
 * gone; then the registration Secret and every namespace (the chart's Roles go with the assigned
 * namespaces, its ServiceAccount and token with the release namespace; the CRD stays, other tests share
 * it). An order not torn down in time has its finalizers stripped, and the clean-up then fails.
 */
export async function destroyTargetWorld(world: TargetWorld | undefined, timeoutMs = 90_000): Promise<void> {
  if (!world) return;
  const places = [
    ...[...world.assigned, ...world.unassigned].map((namespace) => ({ cluster: world.target, namespace })),
    ...world.managementTenants.map((namespace) => ({ cluster: world.management, namespace })),
  ];
  const orders: { cluster: TestCluster; namespace: string; name: string }[] = [];
  for (const place of places) {
    const list = (await custom(place.cluster).listNamespacedCustomObject({
      ...orderApi,
      namespace: place.namespace,
    })) as { items: RabbitMQVhost[] };
    for (const o of list.items) orders.push({ ...place, name: o.metadata?.name ?? "" });
  }
  for (const o of orders) {
    await custom(o.cluster)
      .deleteNamespacedCustomObject({ ...orderApi, namespace: o.namespace, name: o.name })
      .catch(ignore404);
  }
  let failure: Error | undefined;
  try {
    await eventually(
      "the operator to tear the orders down",
      async () => {
        const left = await Promise.all(orders.map((o) => readOrder(o.cluster, o.namespace, o.name)));
        return left.every((o) => o === undefined) ? true : undefined;
      },
      timeoutMs,
      500,
    );
  } catch (error) {
    failure = error as Error;
    await stripFinalizers(world, orders);
  }
  for (const o of orders) {
    const cluster = o.cluster === world.target ? world.clusterName : "";
    await deleteBrokerVhost(world, vhostName({ cluster, namespace: o.namespace, name: o.name }));
  }
  await world.management.core
    .deleteNamespacedSecret({ namespace: world.secretNs, name: world.clusterName })
    .catch(ignore404);
  for (const ns of [world.cpNs, world.secretNs, ...world.managementTenants]) {
    await world.management.core.deleteNamespace({ name: ns }).catch(ignore404);
  }
  for (const ns of [...world.assigned, ...world.unassigned, world.accessNs]) {
    await world.target.core.deleteNamespace({ name: ns }).catch(ignore404);
  }
  if (failure) throw failure;
}

async function stripFinalizers(
  world: TargetWorld,
  orders: { cluster: TestCluster; namespace: string; name: string }[],
): Promise<void> {
  const body = { metadata: { finalizers: null } };
  for (const o of orders) {
    await custom(o.cluster)
      .patchNamespacedCustomObject({ ...orderApi, namespace: o.namespace, name: o.name, body }, merge)
      .catch(ignore404);
  }
  for (const plural of ["permissions", "users", "vhosts"]) {
    const api = { group: "rabbitmq.com", version: "v1beta1", plural, namespace: world.cpNs };
    const list = (await custom(world.management).listNamespacedCustomObject(api)) as {
      items: { metadata: { name: string } }[];
    };
    for (const item of list.items) {
      await custom(world.management)
        .patchNamespacedCustomObject({ ...api, name: item.metadata.name, body }, merge)
        .catch(ignore404);
    }
  }
}

/** The local broker's management API, as its administrator. */
export async function brokerApi(world: TargetWorld, method: string, path: string): Promise<Response> {
  const auth = Buffer.from(`${world.broker.adminUsername}:${world.broker.adminPassword}`).toString("base64");
  return fetch(new URL(path, world.broker.managementUrl), {
    method,
    headers: { authorization: `Basic ${auth}` },
  });
}

async function deleteBrokerVhost(world: TargetWorld, vhost: string): Promise<void> {
  await (await brokerApi(world, "DELETE", `/api/vhosts/${encodeURIComponent(vhost)}`)).arrayBuffer();
  const users = (await (await brokerApi(world, "GET", "/api/users")).json()) as { name: string }[];
  for (const user of users.filter((u) => u.name.startsWith(`${vhost}-v`))) {
    await (await brokerApi(world, "DELETE", `/api/users/${encodeURIComponent(user.name)}`)).arrayBuffer();
  }
}

function ignore404(error: unknown): void {
  if (!isApiError(error, 404)) throw error;
}
