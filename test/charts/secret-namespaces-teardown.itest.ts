// Orders that carry the teardown finalizer from a run without rbac.secretNamespaces, deleted under the
// chart's RBAC with a list that leaves a namespace of theirs out. First the operator runs unscoped (the
// local administrator's kubeconfig) and provisions two orders with deletionPolicy Delete: `leftover` in
// a namespace the ControlPlane assigns but the list leaves out, and `far` in a listed namespace whose
// ControlPlane's namespace (children, password Secrets, the bus) is not listed. Then it runs with exactly
// the chart's RBAC and the list, behind a recording proxy. Deleting `leftover` tears it down completely:
// children, broker users, vhost and backup go, and the delivered Secret beside it goes with the garbage
// collector (the order's owner reference), never asked for by the operator. Deleting `far` deletes
// nothing: the finalizer stays and Ready reads SecretsOutOfReach, naming the namespace and what removing
// the finalizer by hand would leave; once the namespace is in reach (here: the unscoped run again) the
// teardown finishes. No request of the scoped run is answered 403.
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backupPath } from "../../src/orders/core/naming.ts";
import { RABBITMQ_NAMING } from "../../src/orders/rabbitmq/naming.ts";
import { OperatorProcess, releaseOperatorLock } from "../../harness/operator/operator-process.ts";
import { openBaoRead } from "../../harness/world/order-env.ts";
import { refusedByRbac, type RecordingProxy } from "../../harness/world/recording-proxy.ts";
import {
  brokerApi,
  condition,
  createWorld,
  destroyWorld,
  isReady,
  readOrderIn,
  waitForOrderIn,
  type World,
} from "../../harness/world/world.ts";
import { createControlPlane, createManagedBus } from "../../harness/world/managed-bus.ts";
import { localEnv } from "../../harness/world/env.ts";
import { eventually, freshNamespace, isApiError, testCluster } from "../../harness/world/kube.ts";
import {
  installRelease,
  runAsRelease,
  uninstallRelease,
  type Release,
  type ReleaseRun,
} from "../../harness/charts/release.ts";

const orders = { group: "c5c3.io", version: "v1alpha1", plural: "rabbitmqvhosts" } as const;
const FINALIZER = "c5c3.io/rabbitmqvhost-teardown";

describe("an order holding the finalizer of an unscoped run, deleted under rbac.secretNamespaces", () => {
  const cluster = testCluster("management");
  let world: World | undefined;
  let outside = "";
  let far = "";
  let release: Release | undefined;
  let run: ReleaseRun | undefined;
  let api: RecordingProxy | undefined;
  let operator: OperatorProcess | undefined;
  /** What each order had delivered in the unscoped run. */
  const provisioned = new Map<string, { vhost: string; username: string }>();

  const w = (): World => {
    if (!world) throw new Error("no world");
    return world;
  };

  async function applyOrder(namespace: string, name: string, controlPlaneRef: object): Promise<void> {
    await w().custom.patchNamespacedCustomObject(
      {
        ...orders,
        namespace,
        name,
        body: {
          apiVersion: "c5c3.io/v1alpha1",
          kind: "RabbitMQVhost",
          metadata: { name, namespace },
          spec: { controlPlaneRef, passwordGeneration: 1, deletionPolicy: "Delete" },
        },
        fieldManager: "e2e-tenant",
        force: true,
      },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.ServerSideApply),
    );
  }

  async function provision(namespace: string, name: string): Promise<void> {
    const ready = await waitForOrderIn(cluster, namespace, name, `${name} Ready`, isReady);
    const vhost = ready?.status?.vhost ?? "";
    const username = ready?.status?.username ?? "";
    expect(ready?.metadata?.finalizers).toContain(FINALIZER);
    provisioned.set(name, { vhost, username });
  }

  /** The order's children of one rabbitmq.com kind in `namespace`. */
  async function children(cpNs: string, namespace: string, name: string, plural: string): Promise<unknown[]> {
    const list = (await w().custom.listNamespacedCustomObject({
      group: "rabbitmq.com",
      version: "v1beta1",
      plural,
      namespace: cpNs,
      labelSelector: `c5c3.io/rabbitmqvhost-name=${name},c5c3.io/rabbitmqvhost-namespace=${namespace}`,
    })) as { items: unknown[] };
    return list.items;
  }

  async function passwordSecrets(cpNs: string, namespace: string, name: string): Promise<string[]> {
    const list = await cluster.core.listNamespacedSecret({
      namespace: cpNs,
      labelSelector: `c5c3.io/rabbitmqvhost-name=${name},c5c3.io/rabbitmqvhost-namespace=${namespace}`,
    });
    return list.items.map((s) => s.metadata?.name ?? "");
  }

  async function secretExists(namespace: string, name: string): Promise<boolean> {
    try {
      await cluster.core.readNamespacedSecret({ namespace, name });
      return true;
    } catch (error) {
      if (isApiError(error, 404)) return false;
      throw error;
    }
  }

  async function brokerHas(path: string): Promise<boolean> {
    const res = await brokerApi(w(), "GET", path);
    await res.arrayBuffer();
    if (res.status !== 200 && res.status !== 404) throw new Error(`broker GET ${path}: HTTP ${res.status}`);
    return res.status === 200;
  }

  const brokerUser = (name: string) =>
    `/api/users/${encodeURIComponent(provisioned.get(name)?.username ?? "")}`;
  const brokerVhost = (name: string) =>
    `/api/vhosts/${encodeURIComponent(provisioned.get(name)?.vhost ?? "")}`;

  async function unscopedRun(): Promise<OperatorProcess> {
    return OperatorProcess.start();
  }

  beforeAll(async () => {
    world = await createWorld("unscoped");
    outside = await freshNamespace(cluster, "unscoped-outside");
    await createControlPlane(cluster.config, world.cpNs, "cp", [
      { namespace: world.tenantNs },
      { namespace: outside },
    ]);
    far = await freshNamespace(cluster, "unscoped-far");
    await createManagedBus(cluster.config, far, world.broker);
    await createControlPlane(cluster.config, far, "cp", [{ namespace: world.tenantNs }]);

    operator = await unscopedRun();
    await applyOrder(outside, "leftover", world.controlPlane);
    await applyOrder(world.tenantNs, "far", { name: "cp", namespace: far });
    await provision(outside, "leftover");
    await provision(world.tenantNs, "far");
    // Killed, so that the lock stays with this file: no other run's operator slips in between the runs.
    await operator.kill();
    operator = undefined;

    const env = localEnv();
    release = await installRelease(cluster, "vb-unscoped", {
      "settings.openbao-address": env.BAO_ADDR,
      "rbac.secretNamespaces": `{${world.cpNs},${world.tenantNs}}`,
    });
    run = await runAsRelease(cluster, release, {
      recorded: true,
      args: [`--secret-namespaces=${world.cpNs},${world.tenantNs}`],
    });
    ({ operator, api } = run);
  });

  afterAll(async () => {
    try {
      if (world && outside) {
        await world.custom
          .deleteNamespacedCustomObject({ ...orders, namespace: outside, name: "leftover" })
          .catch(() => undefined);
      }
      await destroyWorld(world);
    } finally {
      await operator?.stop();
      releaseOperatorLock();
      await run?.close();
      await uninstallRelease(cluster, release);
      for (const ns of [outside, far].filter((n) => n !== "")) {
        await cluster.core.deleteNamespace({ name: ns }).catch(() => undefined);
      }
    }
  });

  it("without the order's own namespace, tears it down; its delivered Secret goes with the garbage collector", async () => {
    const { cpNs } = w();
    // Frozen while it lives: the finalizer of the unscoped run stays on it.
    const frozen = await waitForOrderIn(
      cluster,
      outside,
      "leftover",
      "leftover SecretsOutOfReach",
      (o) => condition(o, "VhostReady")?.reason === "SecretsOutOfReach",
    );
    expect(frozen?.metadata?.finalizers).toContain(FINALIZER);
    expect(await secretExists(outside, "leftover-credentials")).toBe(true);

    const started = Date.now();
    await w().custom.deleteNamespacedCustomObject({ ...orders, namespace: outside, name: "leftover" });
    await waitForOrderIn(cluster, outside, "leftover", "leftover gone", (o) => o === undefined, 90_000);
    console.log(`leftover: gone ${((Date.now() - started) / 1000).toFixed(1)} s after its deletion`);

    for (const plural of ["users", "permissions", "vhosts"]) {
      expect(await children(cpNs, outside, "leftover", plural)).toEqual([]);
    }
    expect(await passwordSecrets(cpNs, outside, "leftover")).toEqual([]);
    expect(await brokerHas(brokerUser("leftover"))).toBe(false);
    expect(await brokerHas(brokerVhost("leftover"))).toBe(false);
    expect(
      await openBaoRead(
        backupPath(RABBITMQ_NAMING, { cluster: "", namespace: outside, name: "leftover" }, cpNs),
      ),
    ).toBe(undefined);
    await eventually("the garbage collector to remove leftover-credentials", async () =>
      (await secretExists(outside, "leftover-credentials")) ? undefined : true,
    );
    // The operator never asked for it: no request named the namespace's Secrets.
    const asked = (api?.requests ?? []).filter((r) => r.path.includes(`/namespaces/${outside}/secrets`));
    expect(asked.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([]);
  });

  it("without the ControlPlane's namespace, deletes nothing, keeps the finalizer and says what to do", async () => {
    const { tenantNs } = w();
    await w().custom.deleteNamespacedCustomObject({ ...orders, namespace: tenantNs, name: "far" });
    const held = await waitForOrderIn(
      cluster,
      tenantNs,
      "far",
      "far Ready SecretsOutOfReach",
      (o) => condition(o, "Ready")?.reason === "SecretsOutOfReach",
    );
    const ready = condition(held, "Ready");
    expect(ready?.status).toBe("False");
    expect(ready?.message).toContain(`namespace "${far}"`);
    expect(ready?.message).toContain("rbac.secretNamespaces");
    expect(ready?.message).toContain("deletes nothing");
    expect(ready?.message).toContain(FINALIZER);
    expect(ready?.message).toContain(`c5c3.io/rabbitmqvhost-namespace=${tenantNs}`);

    // A while later nothing has moved: the order, its children, its broker user and vhost, its Secrets.
    await new Promise((r) => setTimeout(r, 5_000));
    const later = await readOrderIn(cluster, tenantNs, "far");
    expect(later?.metadata?.finalizers).toContain(FINALIZER);
    expect(condition(later, "Ready")?.reason).toBe("SecretsOutOfReach");
    for (const plural of ["users", "permissions", "vhosts"]) {
      expect(await children(far, tenantNs, "far", plural)).toHaveLength(1);
    }
    expect(await passwordSecrets(far, tenantNs, "far")).not.toEqual([]);
    expect(await brokerHas(brokerUser("far"))).toBe(true);
    expect(await brokerHas(brokerVhost("far"))).toBe(true);
    expect(await secretExists(tenantNs, "far-credentials")).toBe(true);
  });

  it("asked for nothing the chart's Roles refuse", async () => {
    const refusals = refusedByRbac(api?.requests ?? []);
    expect(refusals.map((r) => `${r.method} ${r.path}`)).toEqual([]);
    expect(operator?.logs()).not.toMatch(/forbidden/i);
  });

  it("finishes the held teardown once the namespace is in reach", async () => {
    await operator?.kill();
    operator = await unscopedRun();
    const { tenantNs } = w();
    await waitForOrderIn(cluster, tenantNs, "far", "far gone", (o) => o === undefined, 90_000);
    expect(await brokerHas(brokerUser("far"))).toBe(false);
    expect(await brokerHas(brokerVhost("far"))).toBe(false);
    expect(await passwordSecrets(far, tenantNs, "far")).toEqual([]);
  });
});
