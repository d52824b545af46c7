// The pieces the operator reads on the management cluster, set up on the local environment: the CRDs,
// a RabbitmqCluster standing in for the RabbitMQ cluster operator's (its status, default-user Secret
// and Service point at the local broker), and a ControlPlane that assigns tenant namespaces.
// Used by the main job (scripts/demo/main.ts) and by the end-to-end tests.
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import * as k8s from "@kubernetes/client-node";

const fieldManager = "vhost-broker-localenv";
const crdDirs = ["../../crds", "../../crds/localenv"].map((d) => fileURLToPath(new URL(d, import.meta.url)));

export interface LocalBroker {
  amqpHost: string;
  amqpPort: number;
  managementUrl: string;
  adminUsername: string;
  adminPassword: string;
}

/** Reads the local broker from the variables of .localenv/env.sh. */
export function localBrokerFromEnv(env: NodeJS.ProcessEnv = process.env): LocalBroker {
  const amqp = new URL(required(env, "RABBITMQ_URL"));
  return {
    amqpHost: amqp.hostname,
    amqpPort: Number(amqp.port || 5672),
    managementUrl: required(env, "RABBITMQ_MANAGEMENT_URL"),
    adminUsername: required(env, "RABBITMQ_ADMIN_USERNAME"),
    adminPassword: required(env, "RABBITMQ_ADMIN_PASSWORD"),
  };
}

function required(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name];
  if (!value) throw new Error(`${name} is not set; source .localenv/env.sh first`);
  return value;
}

async function apply(config: k8s.KubeConfig, object: k8s.KubernetesObject): Promise<void> {
  await k8s.KubernetesObjectApi.makeApiClient(config).patch(
    object,
    undefined,
    undefined,
    fieldManager,
    true,
    k8s.PatchStrategy.ServerSideApply,
  );
}

/** Applies every CRD vhost-broker ships (and the RabbitmqCluster stand-in) and waits until served. */
export async function installCrds(
  config: k8s.KubeConfig,
  options: { standIn?: boolean } = {},
): Promise<void> {
  const dirs = options.standIn === false ? crdDirs.slice(0, 1) : crdDirs;
  const crds: k8s.V1CustomResourceDefinition[] = [];
  for (const dir of dirs) {
    for (const file of readdirSync(dir).filter((f) => f.endsWith(".yaml"))) {
      // Typed loading keeps x-kubernetes-validations (client-node serializes known kinds by model).
      for (const crd of k8s.loadAllYaml(
        readFileSync(`${dir}/${file}`, "utf8"),
      ) as k8s.V1CustomResourceDefinition[]) {
        await apply(config, crd);
        crds.push(crd);
      }
    }
  }
  for (const crd of crds) await waitUntilServed(config, crd);
}

/**
 * Waits until a CRD is Established and its resources answer a list. The API server answers 429
 * ("storage is (re)initializing") for a while after a CRD is created, and client-node does not retry
 * that as client-go does; a list that succeeds here means later requests will not meet it.
 */
export async function waitUntilServed(
  config: k8s.KubeConfig,
  crd: k8s.V1CustomResourceDefinition,
): Promise<void> {
  const extensions = config.makeApiClient(k8s.ApiextensionsV1Api);
  const custom = config.makeApiClient(k8s.CustomObjectsApi);
  const name = crd.metadata?.name ?? "";
  const version = crd.spec.versions.find((v) => v.served)?.name ?? "";
  const deadline = Date.now() + 60_000;
  for (;;) {
    const got = await extensions.readCustomResourceDefinition({ name });
    const established = got.status?.conditions?.some((c) => c.type === "Established" && c.status === "True");
    const listed =
      established &&
      (await custom
        .listClusterCustomObject({ group: crd.spec.group, version, plural: crd.spec.names.plural, limit: 1 })
        .then(
          () => true,
          () => false,
        ));
    if (listed) return;
    if (Date.now() > deadline) throw new Error(`CRD ${name} is not served within 60 s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export async function ensureNamespace(config: k8s.KubeConfig, name: string): Promise<void> {
  await apply(config, { apiVersion: "v1", kind: "Namespace", metadata: { name } });
}

/**
 * A RabbitmqCluster named `name` in `namespace`, AllReplicasReady, whose default-user Secret holds the
 * local broker's administrator and AMQP address, and whose management URL is the local one (through
 * upstream's operator-connection-uri annotation, as for a broker reached from outside its cluster).
 */
export async function createManagedBus(
  config: k8s.KubeConfig,
  namespace: string,
  broker: LocalBroker,
  name = "rabbitmq",
): Promise<void> {
  await ensureNamespace(config, namespace);
  const secretName = `${name}-default-user`;
  await apply(config, {
    apiVersion: "v1",
    kind: "Secret",
    // The labels the RabbitMQ cluster operator puts on its default-user Secret.
    metadata: {
      name: secretName,
      namespace,
      labels: {
        "app.kubernetes.io/name": name,
        "app.kubernetes.io/component": "rabbitmq",
        "app.kubernetes.io/part-of": "rabbitmq",
      },
    },
    stringData: {
      username: broker.adminUsername,
      password: broker.adminPassword,
      host: broker.amqpHost,
      port: String(broker.amqpPort),
    },
  } as k8s.V1Secret);
  await apply(config, {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace },
    spec: {
      type: "ClusterIP",
      clusterIP: "None",
      ports: [
        { name: "amqp", port: 5672 },
        { name: "management", port: 15672 },
      ],
    },
  } as k8s.V1Service);
  await apply(config, {
    apiVersion: "rabbitmq.com/v1beta1",
    kind: "RabbitmqCluster",
    metadata: {
      name,
      namespace,
      annotations: { "rabbitmq.com/operator-connection-uri": broker.managementUrl },
    },
    spec: { replicas: 1 },
  } as k8s.KubernetesObject);
  const custom = config.makeApiClient(k8s.CustomObjectsApi);
  await custom.patchNamespacedCustomObjectStatus(
    {
      group: "rabbitmq.com",
      version: "v1beta1",
      plural: "rabbitmqclusters",
      namespace,
      name,
      body: {
        status: {
          binding: { name: secretName },
          defaultUser: {
            secretReference: {
              name: secretName,
              namespace,
              keys: { username: "username", password: "password", host: "host", port: "port" },
            },
            serviceReference: { name, namespace },
          },
          conditions: [
            {
              type: "AllReplicasReady",
              status: "True",
              reason: "AllPodsAreReady",
              lastTransitionTime: new Date().toISOString(),
            },
          ],
        },
      },
    },
    k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
  );
}

export interface Assignment {
  namespace: string;
  targetClusterRef?: { name: string };
}

/** A ControlPlane whose managed bus is the RabbitmqCluster `rabbitmq` in its namespace. */
export async function createControlPlane(
  config: k8s.KubeConfig,
  namespace: string,
  name: string,
  assignments: Assignment[],
  extra: { publishedMessagingEndpoint?: string; busName?: string } = {},
): Promise<void> {
  await apply(config, {
    apiVersion: "c5c3.io/v1alpha1",
    kind: "ControlPlane",
    metadata: { name, namespace },
    spec: {
      namespaceAssignments: assignments,
      infrastructure: {
        messaging: { clusterRef: { name: extra.busName ?? "rabbitmq" } },
        ...(extra.publishedMessagingEndpoint
          ? { publishedMessagingEndpoint: extra.publishedMessagingEndpoint }
          : {}),
      },
    },
  } as k8s.KubernetesObject);
}

/** The example order of the specification: `workflow`, rotating every 3 minutes with a minute of grace. */
export async function createExampleOrder(
  config: k8s.KubeConfig,
  tenantNamespace: string,
  controlPlane: { name: string; namespace: string },
): Promise<void> {
  await apply(config, {
    apiVersion: "c5c3.io/v1alpha1",
    kind: "RabbitMQVhost",
    metadata: { name: "workflow", namespace: tenantNamespace },
    spec: { controlPlaneRef: controlPlane, rotation: { interval: "3m", gracePeriod: "1m" } },
  } as k8s.KubernetesObject);
}
