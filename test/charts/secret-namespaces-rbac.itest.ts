// The operator with exactly deploy/vhost-broker's RBAC under rbac.secretNamespaces (the ControlPlane's
// namespace and one tenant namespace): Secret access only through the chart's per-namespace Roles. An
// order in the listed tenant namespace is provisioned and delivered; one in a namespace the ControlPlane
// assigns but the list leaves out reads SecretsOutOfReach. So do topology objects in a namespace the list
// leaves out, beside their own RabbitmqCluster (as another test's objects on the shared cluster are):
// their broker's default-user Secret is not read there. With the built-in SQL controller on, so do a
// User naming a password Secret and a Connection there: neither Secret is read or written, and no
// account reaches the server. The service account may not list or watch
// Secrets cluster-wide or use them outside the list, so a single such request would be refused: none is
// (the operator reaches the API server through a recording proxy that keeps its own token, and no
// request it forwarded, watches among them, was answered 403; none in the client metrics, no
// "forbidden" in the log).
import * as k8s from "@kubernetes/client-node";
import mysql from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OperatorProcess } from "../../harness/operator/operator-process.ts";
import { refusedByRbac, type RecordingProxy } from "../../harness/world/recording-proxy.ts";
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
} from "../../harness/world/world.ts";
import { createControlPlane, createManagedBus } from "../../harness/world/managed-bus.ts";
import { localEnv } from "../../harness/world/env.ts";
import { eventually, freshNamespace, testCluster } from "../../harness/world/kube.ts";
import {
  installRelease,
  runAsRelease,
  uninstallRelease,
  type Release,
  type ReleaseRun,
} from "../../harness/charts/release.ts";

const orders = { group: "c5c3.io", version: "v1alpha1", plural: "rabbitmqvhosts" } as const;
const topology = { group: "rabbitmq.com", version: "v1beta1" } as const;
const sql = { group: "mariadb.osh.openstack.org", version: "v1alpha1" } as const;

interface TopologyObject {
  metadata?: { finalizers?: string[] };
  status?: { conditions?: { type: string; reason?: string; message?: string }[] };
}

describe("the operator with the chart's RBAC and rbac.secretNamespaces", () => {
  const cluster = testCluster("management");
  let release: Release | undefined;
  let run: ReleaseRun | undefined;
  let operator: OperatorProcess | undefined;
  let api: RecordingProxy | undefined;
  let world: World | undefined;
  let outside: string | undefined;
  let stray: string | undefined;
  const strayAccount = `stray-${Date.now().toString(36)}`;

  beforeAll(async () => {
    world = await createWorld("scoped");
    outside = await freshNamespace(cluster, "scoped-outside");
    await createControlPlane(cluster.config, world.cpNs, "cp", [
      { namespace: world.tenantNs },
      { namespace: outside },
    ]);
    const env = localEnv();
    release = await installRelease(cluster, "vb-scoped", {
      "settings.openbao-address": env.BAO_ADDR,
      "settings.sql-controller": "true",
      "settings.mariadb-host": env.MARIADB_HOST,
      "rbac.secretNamespaces": `{${world.cpNs},${world.tenantNs}}`,
    });
    run = await runAsRelease(cluster, release, {
      recorded: true,
      args: [
        // What the chart's Deployment passes from rbac.secretNamespaces.
        `--secret-namespaces=${world.cpNs},${world.tenantNs}`,
        "--sql-controller",
        `--mariadb-host=${env.MARIADB_HOST}`,
        `--mariadb-port=${env.MARIADB_PORT}`,
        `--mariadb-username=${env.MARIADB_ADMIN_USERNAME}`,
        // The mariaDbRef test/sql's files use: their objects are served as their own operator serves them.
        "--sql-mariadb-refs=names:mariadb",
      ],
      env: { VHOST_BROKER_MARIADB_PASSWORD: env.MARIADB_ADMIN_PASSWORD },
    });
    ({ operator, api } = run);
    // Topology objects beside their RabbitmqCluster in a namespace the list leaves out, made once the
    // operator holds the operator lock: no other test's operator may claim them first.
    stray = await freshNamespace(cluster, "scoped-stray");
    await createManagedBus(cluster.config, stray, world.broker);
    for (const [plural, kind, spec] of [
      ["vhosts", "Vhost", { name: `${stray}-vhost` }],
      ["users", "User", {}],
    ] as const) {
      await world.custom.createNamespacedCustomObject({
        ...topology,
        plural,
        namespace: stray,
        body: {
          apiVersion: "rabbitmq.com/v1beta1",
          kind,
          metadata: { name: "stray" },
          spec: { ...spec, rabbitmqClusterReference: { name: "rabbitmq" } },
        },
      });
    }
    // SQL objects whose Secrets are there: a User's password Secret, a Connection's two.
    await cluster.core.createNamespacedSecret({
      namespace: stray,
      body: {
        metadata: { name: "stray-password", labels: { "k8s.mariadb.com/watch": "" } },
        stringData: { password: "not-read" },
      },
    });
    const passwordSecretKeyRef = { name: "stray-password", key: "password" };
    for (const [plural, kind, spec] of [
      ["users", "User", { name: strayAccount, passwordSecretKeyRef, cleanupPolicy: "Delete" }],
      ["connections", "Connection", { username: strayAccount, passwordSecretKeyRef }],
    ] as const) {
      await world.custom.createNamespacedCustomObject({
        ...sql,
        plural,
        namespace: stray,
        body: {
          apiVersion: `${sql.group}/${sql.version}`,
          kind,
          metadata: { name: "stray" },
          spec: { ...spec, mariaDbRef: { name: "mariadb" } },
        },
      });
    }
  });
  afterAll(async () => {
    try {
      if (world && outside) {
        await world.custom
          .deleteNamespacedCustomObject({ ...orders, namespace: outside, name: "outside" })
          .catch(() => undefined);
      }
      await destroyWorld(world);
      // Gone while the lock is held: no finalizer is on them, and no other operator takes them up.
      if (stray) await cluster.core.deleteNamespace({ name: stray }).catch(() => undefined);
    } finally {
      await operator?.stop();
      await run?.close();
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

    // Topology and SQL objects outside the list: reported, never claimed, their Secrets never asked for
    // (and, for SQL, nothing on the server).
    const strays = [
      { api: topology, plural: "vhosts" },
      { api: topology, plural: "users" },
      { api: sql, plural: "users" },
      { api: sql, plural: "connections" },
    ];
    for (const { api, plural } of strays) {
      const what = `the stray ${api.group} ${plural}`;
      const object = await eventually(`${what} to read SecretsOutOfReach`, async () => {
        const o = (await world!.custom.getNamespacedCustomObject({
          ...api,
          plural,
          namespace: stray!,
          name: "stray",
        })) as TopologyObject;
        const ready = o.status?.conditions?.find((c) => c.type === "Ready");
        return ready?.reason === "SecretsOutOfReach" ? o : undefined;
      });
      const ready = object.status?.conditions?.find((c) => c.type === "Ready");
      expect(ready?.message, what).toContain(`namespace "${stray}"`);
      expect(ready?.message, what).toContain("rbac.secretNamespaces");
      expect(object.metadata?.finalizers ?? [], what).toEqual([]);
    }
    const env = localEnv();
    const server = await mysql.createConnection({
      host: env.MARIADB_HOST,
      port: env.MARIADB_PORT,
      user: env.MARIADB_ADMIN_USERNAME,
      password: env.MARIADB_ADMIN_PASSWORD,
    });
    try {
      const [accounts] = await server.query("SELECT User FROM mysql.user WHERE User = ?", [strayAccount]);
      expect(accounts).toEqual([]);
    } finally {
      await server.end();
    }

    const refusals = refusedByRbac(api?.requests ?? []);
    expect(refusals.map((r) => `${r.method} ${r.path}`)).toEqual([]);
    const metrics = await operator!.metrics();
    expect(metrics).toMatch(/rest_client_requests_total\{[^}]*code="200"/);
    // Its 403s in the client metrics are the proxy's, none of which was a refusal (above): Events in
    // another file's namespace being deleted.
    const refused403 = [...metrics.matchAll(/^rest_client_requests_total\{[^}]*code="403"[^}]*\} (\d+)$/gm)];
    expect(refused403.reduce((sum, m) => sum + Number(m[1]), 0)).toBe(
      (api?.requests ?? []).filter((r) => r.status === 403).length,
    );
    expect(operator?.logs()).not.toMatch(/forbidden/i);
  });
});
