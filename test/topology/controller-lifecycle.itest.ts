// Lifecycle of the topology controller: resources served by someone else are left alone, a
// finalizer is released once the RabbitmqCluster is gone and kept while it is scaled to zero (the
// broker object deleted once it is back), an unreachable broker reads Ready False and then
// True with no help, a connection Secret in another namespace is used only with its consent, and the
// guest user is deleted on verification when asked.
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { rabbitmqClusterKind, topologyKinds, userKind, vhostKind } from "../../src/api/index.ts";
import { apiPath, deleteUser, deleteVhost } from "../../src/topology/broker/index.ts";
import { topologyKind } from "../../src/topology/index.ts";
import { reconcileExternal } from "../../src/external/index.ts";
import { freshNamespace } from "../../harness/world/kube.ts";
import {
  admin,
  cluster,
  condition,
  createResource,
  custom,
  deleteResource,
  env,
  getResource,
  logLines,
  logLinesHolding,
  makeDeps,
  setUpNamespace,
  settle,
  tearDownNamespace,
  unique,
} from "./controller-harness.ts";

const vhostAnswer = z.looseObject({ name: z.string() });
const mergePatch = k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch);
const finalizer = "deletion.finalizers.vhosts.rabbitmq.com";

let namespace = "";
const brokerVhosts: string[] = [];

beforeAll(async () => {
  namespace = await setUpNamespace("topo-life");
});
afterAll(async () => {
  await tearDownNamespace(namespace, topologyKinds);
  for (const vhost of brokerVhosts) await deleteVhost(admin, vhost).catch(() => undefined);
});

async function vhostResource(rabbitmqClusterReference: Record<string, unknown>): Promise<string> {
  const name = unique("life");
  brokerVhosts.push(name);
  await createResource(vhostKind, namespace, name, { name, rabbitmqClusterReference });
  return name;
}

describe("ownership", () => {
  it("leaves a resource served by someone else untouched and logs that once", async () => {
    const deps = makeDeps({
      enabled: true,
      clusters: { serve: "names", names: ["other"] },
      connectionSecrets: false,
    });
    const name = await vhostResource({ name: "rabbitmq" });
    const before = await getResource(vhostKind, namespace, name);
    expect(await reconcileExternal(topologyKind.vhost, deps, namespace, name)).toEqual({});
    expect(await reconcileExternal(topologyKind.vhost, deps, namespace, name)).toEqual({});
    const after = await getResource(vhostKind, namespace, name);
    expect(after?.metadata.resourceVersion).toBe(before?.metadata.resourceVersion);
    expect(after?.metadata.finalizers).toBeUndefined();
    expect(after?.status).toBeUndefined();
    expect(await admin.find(apiPath("vhosts", name), vhostAnswer)).toBeUndefined();
    const told = logLines.filter((l) => l.includes(name) && l.includes("not served"));
    expect(told).toHaveLength(1);
    expect(told[0]).toContain(`RabbitmqCluster ${namespace}/rabbitmq is not in the served list`);
  });

  it("serves a RabbitmqCluster by annotation, and takes its own finalizer off once it is not served", async () => {
    const selection = { serve: "annotated" as const, annotation: "vhost-broker.c5c3.io/topology" };
    const deps = makeDeps({ enabled: true, clusters: selection, connectionSecrets: false });
    const name = await vhostResource({ name: "rabbitmq" });
    await reconcileExternal(topologyKind.vhost, deps, namespace, name);
    expect((await getResource(vhostKind, namespace, name))?.metadata.finalizers).toBeUndefined();

    const annotate = (value: string | null) =>
      custom.patchNamespacedCustomObject(
        {
          group: rabbitmqClusterKind.group,
          version: rabbitmqClusterKind.version,
          plural: rabbitmqClusterKind.plural,
          namespace,
          name: "rabbitmq",
          body: { metadata: { annotations: { [selection.annotation]: value } } },
        },
        mergePatch,
      );
    await annotate("builtin");
    try {
      await settle(topologyKind.vhost, deps, namespace, name);
      const served = await getResource(vhostKind, namespace, name);
      expect(served?.metadata.finalizers).toEqual([finalizer]);
      expect(condition(served, "Ready")?.status).toBe("True");
    } finally {
      await annotate(null);
    }
    await reconcileExternal(topologyKind.vhost, deps, namespace, name);
    // The API server drops an empty list.
    expect((await getResource(vhostKind, namespace, name))?.metadata.finalizers ?? []).toEqual([]);
  });

  it("does nothing at all when switched off", async () => {
    const deps = makeDeps({ enabled: false, clusters: { serve: "all" }, connectionSecrets: true });
    const name = await vhostResource({ name: "rabbitmq" });
    expect(await reconcileExternal(topologyKind.vhost, deps, namespace, name)).toEqual({});
    expect((await getResource(vhostKind, namespace, name))?.status).toBeUndefined();
  });
});

describe("broker", () => {
  it("releases the finalizer without the broker once the RabbitmqCluster is gone, keeping others'", async () => {
    const ns = await setUpNamespace("topo-gone");
    try {
      const deps = makeDeps();
      const name = unique("gone");
      brokerVhosts.push(name);
      await createResource(vhostKind, ns, name, { name, rabbitmqClusterReference: { name: "rabbitmq" } });
      await settle(topologyKind.vhost, deps, ns, name);
      const where = {
        group: vhostKind.group,
        version: vhostKind.version,
        plural: vhostKind.plural,
        namespace: ns,
        name,
      };
      await custom.patchNamespacedCustomObject(
        { ...where, body: { metadata: { finalizers: [finalizer, "example.com/keep"] } } },
        mergePatch,
      );
      await custom.deleteNamespacedCustomObject({
        group: rabbitmqClusterKind.group,
        version: rabbitmqClusterKind.version,
        plural: rabbitmqClusterKind.plural,
        namespace: ns,
        name: "rabbitmq",
      });
      await deleteResource(vhostKind, ns, name);
      expect(await settle(topologyKind.vhost, deps, ns, name)).toEqual({ outcome: {} });
      expect((await getResource(vhostKind, ns, name))?.metadata.finalizers).toEqual(["example.com/keep"]);
      // The broker was not asked: the vhost is still there.
      expect(await admin.find(apiPath("vhosts", name), vhostAnswer)).toMatchObject({ name });
    } finally {
      await tearDownNamespace(ns, topologyKinds);
    }
  });

  it("keeps a deleted User's finalizer and its broker user while the RabbitmqCluster is scaled to zero, and deletes both once it is back", async () => {
    const ns = await setUpNamespace("topo-scaled");
    const userFinalizer = "deletion.finalizers.users.rabbitmq.com";
    let username = "";
    try {
      const deps = makeDeps();
      const name = unique("scaled");
      await createResource(userKind, ns, name, { rabbitmqClusterReference: { name: "rabbitmq" } });
      await settle(topologyKind.user, deps, ns, name);
      username = (await getResource(userKind, ns, name))?.status?.username ?? "";
      expect(username).not.toBe("");
      expect(await admin.find(apiPath("users", username), vhostAnswer)).toMatchObject({ name: username });

      const scale = (replicas: number) =>
        custom.patchNamespacedCustomObject(
          {
            group: rabbitmqClusterKind.group,
            version: rabbitmqClusterKind.version,
            plural: rabbitmqClusterKind.plural,
            namespace: ns,
            name: "rabbitmq",
            body: { spec: { replicas } },
          },
          mergePatch,
        );
      await scale(0);
      await deleteResource(userKind, ns, name);
      // Scaled to zero is not gone: the finalizer stays, the broker keeps the user, and Ready says why.
      for (let pass = 0; pass < 2; pass++) {
        expect(await reconcileExternal(topologyKind.user, deps, ns, name)).toEqual({
          requeueAfterMs: deps.settings.waitingRetryMs,
        });
      }
      const held = await getResource(userKind, ns, name);
      expect(held?.metadata.finalizers).toEqual([userFinalizer]);
      expect(condition(held, "Ready")).toMatchObject({
        status: "False",
        reason: "FailedDelete",
        message: `RabbitmqCluster ${ns}/rabbitmq is scaled to zero: the User is deleted on the broker once that is resolved; to leave it on the broker instead, remove the finalizer ${userFinalizer}`,
      });
      expect(await admin.find(apiPath("users", username), vhostAnswer)).toMatchObject({ name: username });

      await scale(1);
      expect(await settle(topologyKind.user, deps, ns, name)).toEqual({ outcome: {} });
      expect(await getResource(userKind, ns, name)).toBeUndefined();
      expect(await admin.find(apiPath("users", username), vhostAnswer)).toBeUndefined();
    } finally {
      await tearDownNamespace(ns, topologyKinds);
      if (username) await deleteUser(admin, username).catch(() => undefined);
    }
  });

  it("reads Ready False while the broker cannot be reached and True once it can, with no help", async () => {
    const deps = makeDeps();
    const secret = unique("conn");
    const write = (uri: string) =>
      cluster.core
        .replaceNamespacedSecret({
          namespace,
          name: secret,
          body: {
            metadata: { name: secret, namespace, labels: { "rabbitmq.com/topology-operator": "true" } },
            stringData: { uri, username: env.RABBITMQ_ADMIN_USERNAME, password: env.RABBITMQ_ADMIN_PASSWORD },
          },
        })
        .catch(() =>
          cluster.core.createNamespacedSecret({
            namespace,
            body: {
              metadata: { name: secret, namespace, labels: { "rabbitmq.com/topology-operator": "true" } },
              stringData: {
                uri,
                username: env.RABBITMQ_ADMIN_USERNAME,
                password: env.RABBITMQ_ADMIN_PASSWORD,
              },
            },
          }),
        );
    // A port nothing listens on: the broker is "stopped".
    await write("http://127.0.0.1:1");
    const name = await vhostResource({ connectionSecret: { name: secret } });
    await expect(reconcileExternal(topologyKind.vhost, deps, namespace, name)).rejects.toThrow(
      /broker unreachable/,
    );
    const down = condition(await getResource(vhostKind, namespace, name), "Ready");
    expect(down).toMatchObject({ status: "False", reason: "FailedCreateOrUpdate" });

    await write(env.RABBITMQ_MANAGEMENT_URL);
    await settle(topologyKind.vhost, deps, namespace, name);
    expect(condition(await getResource(vhostKind, namespace, name), "Ready")?.status).toBe("True");
    expect(await admin.find(apiPath("vhosts", name), vhostAnswer)).toMatchObject({ name });
    expect(logLinesHolding([env.RABBITMQ_ADMIN_PASSWORD])).toEqual([]);
  });

  it("uses a connection Secret in another namespace only once that Secret consents, and deletes only with it", async () => {
    const deps = makeDeps();
    const shared = await freshNamespace(cluster, "topo-shared");
    try {
      const secret = unique("shared-conn");
      await cluster.core.createNamespacedSecret({
        namespace: shared,
        body: {
          metadata: { name: secret, labels: { "rabbitmq.com/topology-operator": "true" } },
          stringData: {
            uri: env.RABBITMQ_MANAGEMENT_URL,
            username: env.RABBITMQ_ADMIN_USERNAME,
            password: env.RABBITMQ_ADMIN_PASSWORD,
          },
        },
      });
      const name = await vhostResource({ namespace: shared, connectionSecret: { name: secret } });
      await expect(reconcileExternal(topologyKind.vhost, deps, namespace, name)).rejects.toThrow(
        /topology-allowed-namespaces/,
      );
      expect(condition(await getResource(vhostKind, namespace, name), "Ready")).toMatchObject({
        status: "False",
        message: expect.stringContaining(`connection Secret ${shared}/${secret} does not allow`),
      });
      expect(await admin.find(apiPath("vhosts", name), vhostAnswer)).toBeUndefined();

      await cluster.core.patchNamespacedSecret(
        {
          namespace: shared,
          name: secret,
          body: { metadata: { annotations: { "rabbitmq.com/topology-allowed-namespaces": namespace } } },
        },
        mergePatch,
      );
      await settle(topologyKind.vhost, deps, namespace, name);
      expect(condition(await getResource(vhostKind, namespace, name), "Ready")?.status).toBe("True");
      expect(await admin.find(apiPath("vhosts", name), vhostAnswer)).toMatchObject({ name });

      // Consent withdrawn, then the resource deleted: as upstream, the finalizer stays and the broker
      // keeps the vhost; the condition says what to do. Consent back: deleted on the broker.
      const allow = (value: string | null) =>
        cluster.core.patchNamespacedSecret(
          {
            namespace: shared,
            name: secret,
            body: { metadata: { annotations: { "rabbitmq.com/topology-allowed-namespaces": value } } },
          },
          mergePatch,
        );
      await allow(null);
      await deleteResource(vhostKind, namespace, name);
      expect(await reconcileExternal(topologyKind.vhost, deps, namespace, name)).toEqual({
        requeueAfterMs: deps.settings.waitingRetryMs,
      });
      const held = await getResource(vhostKind, namespace, name);
      expect(held?.metadata.finalizers).toEqual([finalizer]);
      expect(condition(held, "Ready")).toMatchObject({ status: "False", reason: "FailedDelete" });
      expect(condition(held, "Ready")?.message).toMatch(
        /does not allow .*: the Vhost is deleted on the broker once that is resolved; to leave it on the broker instead, remove the finalizer deletion\.finalizers\.vhosts\.rabbitmq\.com/,
      );
      expect(await admin.find(apiPath("vhosts", name), vhostAnswer)).toMatchObject({ name });
      await allow(namespace);
      expect(await settle(topologyKind.vhost, deps, namespace, name)).toEqual({ outcome: {} });
      expect(await getResource(vhostKind, namespace, name)).toBeUndefined();
      expect(await admin.find(apiPath("vhosts", name), vhostAnswer)).toBeUndefined();
    } finally {
      await cluster.core.deleteNamespace({ name: shared }).catch(() => undefined);
    }
  });

  it("deletes the guest user on verification when asked", async () => {
    await admin.put(apiPath("users", "guest"), {
      password: `g-${Math.random().toString(36).slice(2)}`,
      tags: "",
    });
    try {
      const deps = makeDeps(undefined, { deleteGuestUser: true });
      const name = await vhostResource({ name: "rabbitmq" });
      await settle(topologyKind.vhost, deps, namespace, name);
      expect(await admin.find(apiPath("users", "guest"), vhostAnswer)).toBeUndefined();
    } finally {
      await deleteUser(admin, "guest");
    }
  });
});
