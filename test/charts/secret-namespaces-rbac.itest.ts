// The operator with exactly deploy/vhost-broker's RBAC under rbac.secretNamespaces (the ControlPlane's
// namespace and one tenant namespace): Secret access only through the chart's per-namespace Roles. An
// order in the listed tenant namespace is provisioned and delivered; one in a namespace the ControlPlane
// assigns but the list leaves out reads SecretsOutOfReach. The service account may not list or watch
// Secrets cluster-wide, so a single such request would be refused: none is (no 403 in the client metrics,
// no "forbidden" in the log).
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OperatorProcess } from "../../e2e/support/operator-process.ts";
import {
  applyOrder,
  condition,
  createWorld,
  destroyWorld,
  isReady,
  readSecret,
  waitForOrder,
  waitForOrderIn,
  type World,
} from "../../e2e/support/world.ts";
import { createControlPlane } from "../../scripts/demo/managed-bus.ts";
import { localEnv } from "../support/env.ts";
import { freshNamespace, testCluster } from "../support/kube.ts";
import {
  installRelease,
  serviceAccountToken,
  tokenKubeconfig,
  uninstallRelease,
  type Release,
} from "./release.ts";

const orders = { group: "c5c3.io", version: "v1alpha1", plural: "rabbitmqvhosts" } as const;

describe("the operator with the chart's RBAC and rbac.secretNamespaces", () => {
  const cluster = testCluster("management");
  let release: Release | undefined;
  let kubeconfig: { path: string; remove: () => void } | undefined;
  let operator: OperatorProcess | undefined;
  let world: World | undefined;
  let outside: string | undefined;

  beforeAll(async () => {
    world = await createWorld("scoped");
    outside = await freshNamespace(cluster, "scoped-outside");
    await createControlPlane(cluster.config, world.cpNs, "cp", [
      { namespace: world.tenantNs },
      { namespace: outside },
    ]);
    release = await installRelease(cluster, "vb-scoped", {
      "settings.openbao-address": localEnv().BAO_ADDR,
      "rbac.secretNamespaces": `{${world.cpNs},${world.tenantNs}}`,
    });
    kubeconfig = tokenKubeconfig(await serviceAccountToken(cluster, release));
    operator = await OperatorProcess.start({
      kubeconfig: kubeconfig.path,
      args: [
        "--leader-elect=true",
        `--leader-election-namespace=${release.namespace}`,
        `--leader-election-id=${release.fullname}`,
        // What the chart's Deployment passes from rbac.secretNamespaces.
        `--secret-namespaces=${world.cpNs},${world.tenantNs}`,
      ],
    });
  });
  afterAll(async () => {
    try {
      if (world && outside) {
        await world.custom
          .deleteNamespacedCustomObject({ ...orders, namespace: outside, name: "outside" })
          .catch(() => undefined);
      }
      await destroyWorld(world);
    } finally {
      await operator?.stop();
      kubeconfig?.remove();
      await uninstallRelease(cluster, release);
      if (outside) await cluster.core.deleteNamespace({ name: outside }).catch(() => undefined);
    }
  });

  it("may not list or watch Secrets cluster-wide, only in the listed namespaces", async () => {
    if (!world || !release) throw new Error("no world");
    const reviews = cluster.config.makeApiClient(k8s.AuthorizationV1Api);
    const user = `system:serviceaccount:${release.namespace}:${release.fullname}`;
    const may = async (verb: string, namespace?: string) =>
      (
        await reviews.createSubjectAccessReview({
          body: {
            spec: {
              user,
              resourceAttributes: { verb, resource: "secrets", ...(namespace ? { namespace } : {}) },
            },
          },
        })
      ).status?.allowed === true;
    expect(await may("list")).toBe(false);
    expect(await may("watch")).toBe(false);
    expect(await may("list", outside)).toBe(false);
    expect(await may("watch", world.cpNs)).toBe(true);
    expect(await may("patch", world.tenantNs)).toBe(true);
  });

  it("delivers an order in a listed namespace and reports one outside as out of reach", async () => {
    if (!world || !release || !outside) throw new Error("no world");
    await applyOrder(world, "scoped", { passwordGeneration: 1 });
    const ready = await waitForOrder(world, "scoped", "Ready", isReady);
    const delivered = await readSecret(world, world.tenantNs, "scoped-credentials");
    expect(delivered["username"]).toBe(ready?.status?.username);
    expect(delivered["transport_url"]).toMatch(/^rabbit:\/\//);

    await world.custom.patchNamespacedCustomObject(
      {
        ...orders,
        namespace: outside,
        name: "outside",
        body: {
          apiVersion: "c5c3.io/v1alpha1",
          kind: "RabbitMQVhost",
          metadata: { name: "outside", namespace: outside },
          spec: { controlPlaneRef: world.controlPlane },
        },
        fieldManager: "e2e-tenant",
        force: true,
      },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.ServerSideApply),
    );
    const refused = await waitForOrderIn(
      cluster,
      outside,
      "outside",
      "SecretsOutOfReach",
      (o) => condition(o, "VhostReady")?.reason === "SecretsOutOfReach",
    );
    for (const type of ["VhostReady", "DeliveryReady"]) {
      expect(condition(refused, type)?.reason).toBe("SecretsOutOfReach");
      expect(condition(refused, type)?.message).toContain(`namespace "${outside}"`);
      expect(condition(refused, type)?.message).toContain("rbac.secretNamespaces");
    }
    expect(condition(refused, "Ready")?.message).toContain("SecretsOutOfReach");
    // Frozen before its finalizer: nothing is held on it.
    expect(refused?.metadata?.finalizers ?? []).toEqual([]);

    const metrics = await operator!.metrics();
    expect(metrics).toMatch(/rest_client_requests_total\{[^}]*code="200"/);
    expect(metrics).not.toMatch(/rest_client_requests_total\{[^}]*code="403"/);
    expect(operator?.logs()).not.toMatch(/forbidden/i);
  });
});
