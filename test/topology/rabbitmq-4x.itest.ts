// RabbitMQ 4.x behaviours on the real local nodes: `rabbitmq` (4.3), `rabbitmq-40` (4.0) and, where
// 3.x differs, `rabbitmq-2` (3.10). The Vhost, Queue and Policy controllers run on the real
// management cluster, each RabbitmqCluster stand-in pointing at a node through a pass-through proxy
// that counts the requests (broker-proxy.ts). A vhost protected from deletion keeps its Vhost's
// finalizer with a condition naming the protection; a deprecated feature the broker denies (or removed)
// is a clear condition on the Queue or Policy that needs it; a vhost's default queue type is set,
// given to a queue declared without a type, and repaired on drift. The one made-up answer is the
// successor check's lagging node, which needs a cluster of several nodes.
import { randomBytes } from "node:crypto";
import * as k8s from "@kubernetes/client-node";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createManagedBus, installCrds } from "../../harness/world/managed-bus.ts";
import { policyKind, queueKind, topologyKinds, vhostKind, type KindRef } from "../../src/api/index.ts";
import { externalEvents } from "../../src/operator/external-events.ts";
import { hashCheck } from "../../src/orders/rabbitmq/successor-check.ts";
import { realClock } from "../../src/runtime/base/clock.ts";
import { EventRecorder } from "../../src/runtime/port/events.ts";
import { KubeRest } from "../../src/runtime/port/kube-rest.ts";
import { RestKube } from "../../src/runtime/port/rest-kube.ts";
import {
  ManagementApiError,
  apiPath,
  SHA512_ALGORITHM,
  hashPasswordSha512,
  type ManagementClient,
} from "../../src/topology/broker/index.ts";
import { createControllerDeps, type ControllerDeps, topologyKind } from "../../src/topology/index.ts";
import { localEnv } from "../../harness/world/env.ts";
import { eventually, freshNamespace } from "../../harness/world/kube.ts";
import { BrokerProxy } from "./broker-proxy.ts";
import {
  clients,
  cluster,
  condition,
  createResource,
  deleteResource,
  getResource,
  patchSpec,
  refusal,
  settle,
  tearDownNamespace,
  testSettings,
  unique,
  type Reconcile,
} from "./controller-harness.ts";
import { serveEverything } from "./ownership.ts";

const env = localEnv();
const finalizer = "deletion.finalizers.vhosts.rabbitmq.com";
const logLines: string[] = [];
const logger = pino(
  { level: "debug", base: undefined },
  { write: (line: string) => void logLines.push(line) },
);
const rest = new KubeRest(cluster.kubeconfig);
const events = cluster.config.makeApiClient(k8s.EventsV1Api);

interface Node {
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

type NodeName = "v43" | "v40" | "v310";
const nodes: Record<NodeName, Node> = {
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
const allNodes = Object.keys(nodes) as NodeName[];

let namespace = "";
/** Vhosts this file made on each node, removed at the end (protection lifted first on 4.3). */
const made: { node: NodeName; vhost: string }[] = [];

const proxy = (node: NodeName) => nodes[node].proxy as BrokerProxy;
const admin = (node: NodeName) => nodes[node].admin as ManagementClient;
const ref = (node: NodeName) => ({ rabbitmqClusterReference: { name: nodes[node].cluster } });

const versionAnswer = z.looseObject({ rabbitmq_version: z.string(), management_version: z.string() });
const vhostAnswer = z.looseObject({
  name: z.string(),
  tags: z.array(z.string()),
  default_queue_type: z.string().optional(),
  protected_from_deletion: z.boolean().optional(),
  metadata: z.looseObject({}).optional(),
});
const queueAnswer = z.looseObject({
  type: z.string(),
  durable: z.boolean(),
  arguments: z.record(z.string(), z.unknown()),
});
const policyAnswer = z.looseObject({ definition: z.record(z.string(), z.unknown()) });
const featureAnswer = z.looseObject({
  name: z.string(),
  deprecation_phase: z.string(),
  state: z.string().optional(),
});
const featuresAnswer = z.array(featureAnswer);

beforeAll(async () => {
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
});

afterAll(async () => {
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
});

/** Deps as the operator builds them: transitions recorded as events.k8s.io Events. */
function makeDeps(): ControllerDeps {
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

async function eventAbout(name: string, reason: string): Promise<k8s.EventsV1Event> {
  return eventually(`an Event ${reason} about ${name}`, async () => {
    const list = await events.listNamespacedEvent({ namespace });
    return list.items.find((e) => e.regarding?.name === name && e.reason === reason);
  });
}

/** A Vhost object on `node`, Ready; its broker vhost is removed after the file. */
async function readyVhost(
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

async function expectReady(kind: KindRef, name: string): Promise<void> {
  const ready = condition(await getResource(kind, namespace, name), "Ready");
  expect(ready, `${kind.kind} ${name}: ${ready?.message}`).toMatchObject({ status: "True" });
}

/**
 * The Ready condition of a refused object: False, its reason, and the message; the generation the
 * broker last took stays observed (none, for an object never declared).
 */
async function refusedCondition(
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
async function afterVerification(reconcile: Reconcile, deps: ControllerDeps, name: string): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, deps.settings.verificationPeriodMs + 200));
  expect((await settle(reconcile, deps, namespace, name)).terminal).toBeUndefined();
}

describe(`a vhost protected from deletion (RabbitMQ ${nodes.v43.version})`, () => {
  it("keeps the Vhost's finalizer and says why, retried with backoff; a declaration keeps the protection; deleted once the protection is lifted", async () => {
    const deps = makeDeps();
    const name = await readyVhost(deps, "v43", "protected", { tags: ["a"] });
    const path = apiPath("vhosts", name);
    expect(await admin("v43").get(path, vhostAnswer)).toMatchObject({ protected_from_deletion: false });

    // What `rabbitmqctl enable_vhost_deletion_protection` does, through the management API.
    await admin("v43").post(apiPath("vhosts", name, "deletion", "protection"), undefined);
    expect(await admin("v43").get(path, vhostAnswer)).toMatchObject({
      protected_from_deletion: true,
      metadata: expect.objectContaining({ protected_from_deletion: true }),
    });

    // The controller's PUT of a changed spec leaves the protection in place (4.3 merges the metadata).
    const puts = proxy("v43").count(`PUT ${path}`);
    await patchSpec(vhostKind, namespace, name, { tags: ["a", "b"] });
    expect((await settle(topologyKind.vhost, deps, namespace, name)).terminal).toBeUndefined();
    expect(proxy("v43").count(`PUT ${path}`)).toBe(puts + 1);
    const updated = await admin("v43").get(path, vhostAnswer);
    expect([...updated.tags].sort()).toEqual(["a", "b"]);
    expect(updated.protected_from_deletion).toBe(true);

    const deletes = proxy("v43").count(`DELETE ${path}`);
    await deleteResource(vhostKind, namespace, name);
    const first = await refusal(topologyKind.vhost, deps, namespace, name);
    const second = await refusal(topologyKind.vhost, deps, namespace, name);
    // The refusal backoff: waitingRetryMs, doubled per refusal in a row.
    expect(first.retryAfterMs).toBeGreaterThanOrEqual(testSettings.waitingRetryMs ?? 0);
    expect(second.retryAfterMs).toBe(2 * (first.retryAfterMs ?? 0));
    expect(proxy("v43").count(`DELETE ${path}`)).toBeGreaterThanOrEqual(deletes + 2);
    expect(await admin("v43").find(path, vhostAnswer)).toMatchObject({ name, protected_from_deletion: true });

    const kept = await getResource(vhostKind, namespace, name);
    expect(kept?.metadata.finalizers).toEqual([finalizer]);
    const ready = condition(kept, "Ready");
    expect(ready).toMatchObject({ status: "False", reason: "FailedDelete" });
    expect(ready?.message).toBe(
      `DELETE ${path}: 412 Refusing to delete virtual host '${name}' because it is protected from deletion. ` +
        `It is deleted once the protection is lifted (DELETE ${apiPath("vhosts", name, "deletion", "protection")}, ` +
        `or rabbitmqctl disable_vhost_deletion_protection "${name}"); to leave the vhost on the broker instead, ` +
        `remove the finalizer ${finalizer}`,
    );
    const event = await eventAbout(name, "FailedDelete");
    expect(event.type).toBe("Warning");
    expect(event.note).toContain("because it is protected from deletion");

    await admin("v43").delete(apiPath("vhosts", name, "deletion", "protection"));
    expect(await settle(topologyKind.vhost, deps, namespace, name)).toEqual({ outcome: {} });
    expect(await getResource(vhostKind, namespace, name)).toBeUndefined();
    expect(await admin("v43").find(path, vhostAnswer)).toBeUndefined();
  });

  it("a Ready vhost is confirmed from 4.3's listing after a restart without being declared again", async () => {
    const name = await readyVhost(makeDeps(), "v43", "readback");
    const puts = proxy("v43").count(`PUT ${apiPath("vhosts", name)}`);
    const lists = proxy("v43").count("GET /api/vhosts");
    // New deps: a restarted process, with no memo of the declaration.
    expect((await settle(topologyKind.vhost, makeDeps(), namespace, name)).terminal).toBeUndefined();
    expect(
      proxy("v43").count("GET /api/vhosts") + proxy("v43").count(`GET ${apiPath("vhosts", name)}`),
    ).toBeGreaterThan(lists);
    expect(proxy("v43").count(`PUT ${apiPath("vhosts", name)}`)).toBe(puts);
    await expectReady(vhostKind, name);
  });

  it(`has no protection on ${nodes.v40.version} and ${nodes.v310.version}: the endpoint answers 405 and the vhost answer has no such field`, async () => {
    for (const node of ["v40", "v310"] as const) {
      const name = await readyVhost(makeDeps(), node, "unprotectable");
      const refused = await admin(node)
        .post(apiPath("vhosts", name, "deletion", "protection"), undefined)
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(refused, node).toBeInstanceOf(ManagementApiError);
      expect((refused as ManagementApiError).status, node).toBe(405);
      expect(await admin(node).get(apiPath("vhosts", name), vhostAnswer), node).not.toHaveProperty(
        "protected_from_deletion",
      );
    }
  });
});

describe("deprecated features", () => {
  it(`are listed by ${nodes.v43.version} and ${nodes.v40.version} in their phases, and unknown to ${nodes.v310.version}`, async () => {
    const phases = async (node: NodeName) =>
      Object.fromEntries(
        (await admin(node).get("/api/deprecated-features", featuresAnswer)).map((f) => [
          f.name,
          f.state === undefined ? f.deprecation_phase : `${f.deprecation_phase}/${f.state}`,
        ]),
      );
    expect(await phases("v43")).toMatchObject({
      queue_master_locator: "denied_by_default/denied",
      global_qos: "denied_by_default/denied",
      amqp_address_v1: "denied_by_default/denied",
      transient_nonexcl_queues: "permitted_by_default/permitted",
      classic_queue_mirroring: "removed/denied",
      ram_node_type: "removed/denied",
    });
    // 4.0 sends no `state`, and permits what 4.3 denies by default.
    expect(await phases("v40")).toMatchObject({
      queue_master_locator: "permitted_by_default",
      global_qos: "permitted_by_default",
      transient_nonexcl_queues: "permitted_by_default",
      classic_queue_mirroring: "removed",
    });
    await expect(admin("v310").find("/api/deprecated-features", featuresAnswer)).resolves.toBeUndefined();
    await expect(
      admin("v310").find("/api/deprecated-features/used", featuresAnswer),
    ).resolves.toBeUndefined();
  });

  it(`a Queue with x-queue-master-locator reads why ${nodes.v43.version} denies it and what replaces it; ${nodes.v40.version} declares it`, async () => {
    const deps = makeDeps();
    const args = { "x-queue-master-locator": "min-masters" };
    const vhost43 = await readyVhost(deps, "v43", "locator");
    const name = unique("locator-q");
    await createResource(queueKind, namespace, name, {
      name,
      vhost: vhost43,
      arguments: args,
      ...ref("v43"),
    });
    const refused = await refusal(topologyKind.queue, deps, namespace, name);
    expect(refused.retryAfterMs).toBeGreaterThanOrEqual(testSettings.waitingRetryMs ?? 0);
    expect(await refusedCondition(queueKind, name, "FailedCreateOrUpdate")).toBe(
      `PUT ${apiPath("queues", vhost43, name)}: 400 the broker denies the deprecated feature queue_master_locator ` +
        "(the queue argument x-queue-master-locator): recreate the Queue without x-queue-master-locator, " +
        "x-queue-leader-locator replaces it (arguments are immutable), or permit the feature on the broker " +
        "(deprecated_features.permit.queue_master_locator = true)",
    );
    expect(await admin("v43").find(apiPath("queues", vhost43, name), queueAnswer)).toBeUndefined();
    const event = await eventAbout(name, "FailedCreateOrUpdate");
    expect(event.type).toBe("Warning");
    expect(event.note).toContain("queue_master_locator");

    // As the condition says: recreated with the successor argument, it is declared.
    await deleteResource(queueKind, namespace, name);
    expect(await settle(topologyKind.queue, deps, namespace, name)).toEqual({ outcome: {} });
    await createResource(queueKind, namespace, name, {
      name,
      vhost: vhost43,
      arguments: { "x-queue-leader-locator": "balanced" },
      ...ref("v43"),
    });
    expect((await settle(topologyKind.queue, deps, namespace, name)).terminal).toBeUndefined();
    await expectReady(queueKind, name);
    expect(await admin("v43").get(apiPath("queues", vhost43, name), queueAnswer)).toMatchObject({
      type: "classic",
      arguments: { "x-queue-leader-locator": "balanced" },
    });

    // 4.0 permits the feature by default: the same Queue is declared there.
    const vhost40 = await readyVhost(deps, "v40", "locator");
    const name40 = unique("locator-q");
    await createResource(queueKind, namespace, name40, {
      name: name40,
      vhost: vhost40,
      arguments: args,
      ...ref("v40"),
    });
    expect((await settle(topologyKind.queue, deps, namespace, name40)).terminal).toBeUndefined();
    await expectReady(queueKind, name40);
    expect(await admin("v40").get(apiPath("queues", vhost40, name40), queueAnswer)).toMatchObject({
      type: "classic",
      arguments: args,
    });
  });

  it(`a Policy with queue-master-locator is refused by ${nodes.v43.version} with a clear condition, applied by ${nodes.v40.version}, and heals once the key is replaced`, async () => {
    const deps = makeDeps();
    const definition = { "queue-master-locator": "min-masters" };
    const vhost43 = await readyVhost(deps, "v43", "policy-locator");
    const name = unique("policy-locator");
    const spec = { name, vhost: vhost43, pattern: "^x$", applyTo: "queues", definition, ...ref("v43") };
    await createResource(policyKind, namespace, name, spec);
    await refusal(topologyKind.policy, deps, namespace, name);
    expect(await refusedCondition(policyKind, name, "FailedCreateOrUpdate")).toBe(
      `PUT ${apiPath("policies", vhost43, name)}: 400 the broker denies the deprecated feature queue_master_locator ` +
        "(the policy key queue-master-locator): remove queue-master-locator from the definition, " +
        "queue-leader-locator replaces it, or permit the feature on the broker " +
        "(deprecated_features.permit.queue_master_locator = true)",
    );
    // A merge patch: the old key goes with null.
    await patchSpec(policyKind, namespace, name, {
      definition: { "queue-master-locator": null, "queue-leader-locator": "balanced" },
    });
    expect((await settle(topologyKind.policy, deps, namespace, name)).terminal).toBeUndefined();
    await expectReady(policyKind, name);
    expect((await admin("v43").get(apiPath("policies", vhost43, name), policyAnswer)).definition).toEqual({
      "queue-leader-locator": "balanced",
    });

    const vhost40 = await readyVhost(deps, "v40", "policy-locator");
    const name40 = unique("policy-locator");
    await createResource(policyKind, namespace, name40, {
      ...spec,
      name: name40,
      vhost: vhost40,
      ...ref("v40"),
    });
    expect((await settle(topologyKind.policy, deps, namespace, name40)).terminal).toBeUndefined();
    await expectReady(policyKind, name40);
    expect((await admin("v40").get(apiPath("policies", vhost40, name40), policyAnswer)).definition).toEqual(
      definition,
    );
  });

  it(`a Policy with classic mirroring's ha-* keys reads that 4.0 removed them (${nodes.v43.version} and ${nodes.v40.version}); ${nodes.v310.version} applies it`, async () => {
    const deps = makeDeps();
    const definition = { "ha-mode": "exactly", "ha-params": 2, "ha-sync-mode": "automatic" };
    for (const node of ["v43", "v40"] as const) {
      const vhost = await readyVhost(deps, node, "mirrored");
      const name = unique("policy-ha");
      await createResource(policyKind, namespace, name, {
        name,
        vhost,
        pattern: ".*",
        applyTo: "queues",
        definition,
        ...ref(node),
      });
      await refusal(topologyKind.policy, deps, namespace, name);
      expect(await refusedCondition(policyKind, name, "FailedCreateOrUpdate"), node).toBe(
        `PUT ${apiPath("policies", vhost, name)}: 400 the broker does not know the policy keys ha-mode, ha-params, ha-sync-mode: ` +
          "classic queue mirroring (deprecated feature classic_queue_mirroring) was removed in RabbitMQ 4.0; " +
          "remove the ha-* keys from the definition (quorum queues replicate instead)",
      );
      await patchSpec(policyKind, namespace, name, {
        definition: { "ha-mode": null, "ha-params": null, "ha-sync-mode": null, "max-length": 10 },
      });
      expect((await settle(topologyKind.policy, deps, namespace, name)).terminal).toBeUndefined();
      await expectReady(policyKind, name);
      expect((await admin(node).get(apiPath("policies", vhost, name), policyAnswer)).definition).toEqual({
        "max-length": 10,
      });
    }
    const vhost = await readyVhost(deps, "v310", "mirrored");
    const name = unique("policy-ha");
    await createResource(policyKind, namespace, name, {
      name,
      vhost,
      pattern: ".*",
      applyTo: "queues",
      definition,
      ...ref("v310"),
    });
    expect((await settle(topologyKind.policy, deps, namespace, name)).terminal).toBeUndefined();
    await expectReady(policyKind, name);
    expect((await admin("v310").get(apiPath("policies", vhost, name), policyAnswer)).definition).toEqual(
      definition,
    );
  });

  it(`a non-durable Queue is declared by ${nodes.v43.version} (permitted by default) and shows in /api/deprecated-features/used`, async () => {
    const deps = makeDeps();
    const vhost = await readyVhost(deps, "v43", "transient");
    const name = unique("transient-q");
    await createResource(queueKind, namespace, name, { name, vhost, durable: false, ...ref("v43") });
    expect((await settle(topologyKind.queue, deps, namespace, name)).terminal).toBeUndefined();
    await expectReady(queueKind, name);
    expect(await admin("v43").get(apiPath("queues", vhost, name), queueAnswer)).toMatchObject({
      type: "classic",
      durable: false,
    });
    // Node-wide: what any client used since the node started, this queue among them.
    const used = await admin("v43").get("/api/deprecated-features/used", featuresAnswer);
    expect(used.map((f) => f.name)).toContain("transient_nonexcl_queues");
  });
});

describe("a vhost's default queue type", () => {
  for (const node of allNodes) {
    it(`quorum on ${nodes[node].line}: set on the vhost, given to a Queue without a type, and repaired on drift`, async () => {
      const deps = makeDeps();
      const vhost = await readyVhost(deps, node, "dqt", { defaultQueueType: "quorum" });
      const vhostPath = apiPath("vhosts", vhost);
      expect(await admin(node).get(vhostPath, vhostAnswer)).toMatchObject({ default_queue_type: "quorum" });

      const name = unique("dqt-q");
      const queuePath = apiPath("queues", vhost, name);
      await createResource(queueKind, namespace, name, { name, vhost, ...ref(node) });
      expect((await settle(topologyKind.queue, deps, namespace, name)).terminal).toBeUndefined();
      await expectReady(queueKind, name);
      expect(await admin(node).get(queuePath, queueAnswer)).toMatchObject({
        type: "quorum",
        durable: true,
        arguments: { "x-queue-type": "quorum" },
      });

      // A verification pass finds the quorum queue as the spec wants it (no type asked): nothing declared.
      const queuePuts = proxy(node).count(`PUT ${queuePath}`);
      await afterVerification(topologyKind.queue, deps, name);
      expect(proxy(node).count(`PUT ${queuePath}`)).toBe(queuePuts);

      if (node !== "v310") {
        // 4.x changes an existing vhost's default queue type on a PUT: drift the controller repairs.
        await admin(node).put(vhostPath, { default_queue_type: "classic" });
        expect(await admin(node).get(vhostPath, vhostAnswer)).toMatchObject({
          default_queue_type: "classic",
        });
        const vhostPuts = proxy(node).count(`PUT ${vhostPath}`);
        await afterVerification(topologyKind.vhost, deps, vhost);
        expect(proxy(node).count(`PUT ${vhostPath}`)).toBe(vhostPuts + 1);
        expect(await admin(node).get(vhostPath, vhostAnswer)).toMatchObject({ default_queue_type: "quorum" });
      }

      // The vhost deleted on the broker: both come back, the queue a quorum queue again.
      await admin(node).delete(vhostPath);
      await afterVerification(topologyKind.vhost, deps, vhost);
      expect(await admin(node).get(vhostPath, vhostAnswer)).toMatchObject({ default_queue_type: "quorum" });
      await afterVerification(topologyKind.queue, deps, name);
      await expectReady(queueKind, name);
      expect(await admin(node).get(queuePath, queueAnswer)).toMatchObject({ type: "quorum", durable: true });
    });
  }

  it("a Queue without a type in a vhost without one: 4.x adds x-queue-type classic to its arguments, 3.10 does not; no drift on either", async () => {
    const deps = makeDeps();
    for (const node of allNodes) {
      const vhost = await readyVhost(deps, node, "no-dqt");
      const name = unique("untyped-q");
      const path = apiPath("queues", vhost, name);
      await createResource(queueKind, namespace, name, {
        name,
        vhost,
        arguments: { "x-max-length": 20 },
        ...ref(node),
      });
      expect((await settle(topologyKind.queue, deps, namespace, name)).terminal).toBeUndefined();
      const answer = await admin(node).get(path, queueAnswer);
      expect(answer, node).toMatchObject({ type: "classic", durable: true });
      expect(answer.arguments, node).toEqual(
        node === "v310" ? { "x-max-length": 20 } : { "x-max-length": 20, "x-queue-type": "classic" },
      );
      const puts = proxy(node).count(`PUT ${path}`);
      await afterVerification(topologyKind.queue, deps, name);
      expect(proxy(node).count(`PUT ${path}`), node).toBe(puts);
      await expectReady(queueKind, name);
    }
  });

  it(`${nodes.v310.version} keeps an existing vhost's default queue type on a PUT; 4.x changes it`, async () => {
    for (const node of allNodes) {
      const vhost = unique("dqt-change");
      made.push({ node, vhost });
      const path = apiPath("vhosts", vhost);
      await admin(node).put(path, { default_queue_type: "quorum", defaultqueuetype: "quorum" });
      await admin(node).put(path, { default_queue_type: "classic", defaultqueuetype: "classic" });
      expect(await admin(node).get(path, vhostAnswer), node).toMatchObject({
        default_queue_type: node === "v310" ? "quorum" : "classic",
      });
    }
  });
  it(`a Vhost whose defaultQueueType changes reads on ${nodes.v310.version} that the broker keeps the old one, and is Ready again set back`, async () => {
    const deps = makeDeps();
    const vhost = await readyVhost(deps, "v310", "dqt-kept", { defaultQueueType: "quorum" });
    const path = apiPath("vhosts", vhost);
    await patchSpec(vhostKind, namespace, vhost, { defaultQueueType: "classic" });
    await refusal(topologyKind.vhost, deps, namespace, vhost);
    expect(await refusedCondition(vhostKind, vhost, "FailedCreateOrUpdate", 1)).toBe(
      `PUT ${path}: the broker keeps the default queue type quorum the vhost was created with ` +
        "(RabbitMQ 3.x sets it only when it creates the vhost): set defaultQueueType: quorum, " +
        "or delete the vhost on the broker so that it is created again (its queues and messages go with it)",
    );
    expect(await admin("v310").get(path, vhostAnswer)).toMatchObject({ default_queue_type: "quorum" });
    await patchSpec(vhostKind, namespace, vhost, { defaultQueueType: "quorum" });
    expect((await settle(topologyKind.vhost, deps, namespace, vhost)).terminal).toBeUndefined();
    await expectReady(vhostKind, vhost);
  });
});

describe(`the successor's hash check (RabbitMQ ${nodes.v43.version})`, () => {
  const login = (username: string, password: string) => ({
    host: "127.0.0.1",
    port: 5672,
    resource: "/",
    username,
    password,
  });
  const proxied = () =>
    clients.client({ url: proxy("v43").url, username: nodes.v43.username, password: nodes.v43.password });
  const users: string[] = [];
  afterAll(async () => {
    for (const user of users)
      await admin("v43")
        .delete(apiPath("users", user))
        .catch(() => undefined);
  });

  // The one made-up answer: a node of a cluster whose copy of the user lags the PUT (no single local
  // node can show it), the proxy's 404 for the first reads; the user answer itself is 4.3's.
  it("reads the user again while the node asked lags the user's PUT, and accepts 4.3's answer", async () => {
    const name = unique("successor");
    users.push(name);
    const secret = randomBytes(18).toString("base64url");
    await admin("v43").put(apiPath("users", name), {
      password_hash: hashPasswordSha512(secret),
      hashing_algorithm: SHA512_ALGORITHM,
      tags: "",
    });
    proxy("v43").lag(name, 2);
    const check = await hashCheck(proxied(), login(name, secret), 5_000, { reads: 4, gapMs: 50 });
    expect(check).toEqual({ accepted: true });
    expect(proxy("v43").count(`GET ${apiPath("users", name)}`)).toBe(3);
  });

  it("refuses after its reads when 4.3 holds another password", async () => {
    const name = unique("successor");
    users.push(name);
    await admin("v43").put(apiPath("users", name), {
      password: randomBytes(18).toString("base64url"),
      tags: "",
    });
    const check = await hashCheck(proxied(), login(name, "not-it"), 5_000, { reads: 3, gapMs: 50 });
    expect(check).toEqual({
      accepted: false,
      reason: `the broker holds another password for user "${name}"`,
    });
    expect(proxy("v43").count(`GET ${apiPath("users", name)}`)).toBe(3);
  });
});

describe("the logs", () => {
  it("hold no administrator password", () => {
    const passwords = allNodes.map((node) => nodes[node].password);
    expect(logLines.filter((line) => passwords.some((p) => line.includes(p)))).toEqual([]);
  });
});
