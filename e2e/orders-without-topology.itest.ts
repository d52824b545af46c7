// An order on a management cluster that serves none of the rabbitmq.com topology kinds: it reads
// TopologyOperatorNotInstalled, is retried every 10 minutes, delivers nothing, and can still be deleted
// (its finalizer goes, though no child kind can be listed). The local environment's target cluster never
// gets the topology kinds, so it plays that management cluster here.
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createControlPlane,
  createExampleOrder,
  createManagedBus,
  localBrokerFromEnv,
} from "../harness/world/managed-bus.ts";
import { controlPlaneKind, rabbitMQVhostKind, rabbitmqClusterKind, vhostKind } from "../src/api/index.ts";
import { backupPath } from "../src/orders/core/naming.ts";
import { RABBITMQ_NAMING } from "../src/orders/rabbitmq/naming.ts";
import { reconcileOrder } from "../src/orders/core/reconcile.ts";
import { rabbitMQVhostOrder } from "../src/orders/rabbitmq/kind.ts";
import { installKind } from "../harness/world/admission.ts";
import { localEnv } from "../harness/world/env.ts";
import { freshNamespace, testCluster } from "../harness/world/kube.ts";
import { condition, OrderDriver } from "../harness/operator/order-driver.ts";
import { openBaoRead } from "../harness/world/order-env.ts";

const cluster = testCluster("target");
const custom = cluster.config.makeApiClient(k8s.CustomObjectsApi);
// Nothing acts on the children between passes: there is no topology operator.
const driver = new OrderDriver(cluster, { step: async () => undefined });
const ORDER = "workflow";
const FINALIZER = "c5c3.io/rabbitmqvhost-teardown";
let cpNs = "";
let tenantNs = "";

beforeAll(async () => {
  for (const kind of [rabbitMQVhostKind, controlPlaneKind, rabbitmqClusterKind])
    await installKind(cluster, kind);
  cpNs = await freshNamespace(cluster, "no-topo-cp");
  tenantNs = await freshNamespace(cluster, "no-topo-tenant");
  await createManagedBus(
    cluster.config,
    cpNs,
    localBrokerFromEnv(localEnv() as unknown as NodeJS.ProcessEnv),
  );
  await createControlPlane(cluster.config, cpNs, "cp", [{ namespace: tenantNs }]);
});

afterAll(async () => {
  // Should the teardown have failed, the finalizer is taken off so that the namespace can go.
  await custom
    .patchNamespacedCustomObject(
      {
        group: rabbitMQVhostKind.group,
        version: rabbitMQVhostKind.version,
        plural: rabbitMQVhostKind.plural,
        namespace: tenantNs,
        name: ORDER,
        body: { metadata: { finalizers: null } },
      },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    )
    .catch(() => undefined);
  for (const name of [tenantNs, cpNs]) await cluster.core.deleteNamespace({ name }).catch(() => undefined);
});

describe("an order where no topology operator is installed", () => {
  it("reads TopologyOperatorNotInstalled, retried every 10 minutes, and delivers nothing", async () => {
    const served = custom.listNamespacedCustomObject({
      group: vhostKind.group,
      version: vhostKind.version,
      plural: vhostKind.plural,
      namespace: cpNs,
    });
    await expect(served, "the cluster must not serve rabbitmq.com Vhosts").rejects.toMatchObject({
      code: 404,
    });

    await createExampleOrder(cluster.config, tenantNs, { name: "cp", namespace: cpNs });
    const order = await driver.until(
      tenantNs,
      ORDER,
      "TopologyOperatorNotInstalled",
      (o) => condition(o, "VhostReady")?.reason === "TopologyOperatorNotInstalled",
    );
    expect(condition(order, "VhostReady")).toMatchObject({
      status: "False",
      message:
        "the management cluster serves no rabbitmq.com/v1beta1 Vhost; install the RabbitMQ Messaging Topology Operator (deploy/flux-system/releases/messaging-topology-operator.yaml) or enable vhost-broker's built-in topology controller; retried every 10 minutes",
    });
    expect(condition(order, "Ready")?.status).toBe("False");
    expect(order?.metadata.finalizers).toContain(FINALIZER);
    expect(await reconcileOrder(rabbitMQVhostOrder(), driver.deps, "", tenantNs, ORDER)).toEqual({
      requeueAfterMs: 600_000,
    });
    const secrets = await cluster.core.listNamespacedSecret({ namespace: tenantNs });
    expect(secrets.items.map((s) => s.metadata?.name)).not.toContain(`${ORDER}-credentials`);
  });

  it("is deleted: the finalizer goes though no child kind can be listed", async () => {
    await custom.deleteNamespacedCustomObject({
      group: rabbitMQVhostKind.group,
      version: rabbitMQVhostKind.version,
      plural: rabbitMQVhostKind.plural,
      namespace: tenantNs,
      name: ORDER,
    });
    await driver.until(tenantNs, ORDER, "the order to be gone", (o) => o === undefined, 30_000);
    expect(
      await openBaoRead(backupPath(RABBITMQ_NAMING, { cluster: "", namespace: tenantNs, name: ORDER }, cpNs)),
    ).toBeUndefined();
  });
});
