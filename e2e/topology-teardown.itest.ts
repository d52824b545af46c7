// The deletion of a topology object whose connection Secret lacks the label
// `rabbitmq.com/topology-operator: "true"` (issue 44, item 8), in the running operator against the
// local broker. One never declared (Ready False, saying why) goes at once, and the broker's queue of
// the same name, declared by someone else, stays. One declared while the Secret had the label, which it
// then lost, is deleted on the broker through the Secret, read directly, and goes too.
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installCrds } from "../harness/world/managed-bus.ts";
import { localEnv } from "../harness/world/env.ts";
import { eventually, freshNamespace, testCluster } from "../harness/world/kube.ts";
import { OperatorProcess } from "../harness/operator/operator-process.ts";

const env = localEnv();
const cluster = testCluster("management");
const custom = cluster.config.makeApiClient(k8s.CustomObjectsApi);
const merge = k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch);
const label = "rabbitmq.com/topology-operator";
const finalizer = "deletion.finalizers.queues.rabbitmq.com";
const vhost = `vb-teardown-${Date.now().toString(36)}`;
/** Longer than a pass takes, far shorter than the 60 s the issue's run waited in vain. */
const DELETION_MS = 20_000;

let namespace = "";
let operator: OperatorProcess | undefined;

const authorization = `Basic ${Buffer.from(`${env.RABBITMQ_ADMIN_USERNAME}:${env.RABBITMQ_ADMIN_PASSWORD}`).toString("base64")}`;
const admin = (path: string, init: RequestInit = {}) =>
  fetch(`${env.RABBITMQ_MANAGEMENT_URL}/api/${path}`, {
    ...init,
    headers: { authorization, "content-type": "application/json" },
  });
const queuePath = (name: string) => `queues/${encodeURIComponent(vhost)}/${name}`;

interface Queue {
  metadata: { finalizers?: string[] };
  status?: { conditions?: { type: string; status: string; message?: string }[] };
}
const queues = { group: "rabbitmq.com", version: "v1beta1", plural: "queues" };
const getQueue = (name: string): Promise<Queue | undefined> =>
  (custom.getNamespacedCustomObject({ ...queues, namespace, name }) as Promise<Queue>).catch(
    (error: unknown) => {
      if ((error as { code?: number }).code === 404) return undefined;
      throw error;
    },
  );
const readyOf = (queue: Queue | undefined) => queue?.status?.conditions?.find((c) => c.type === "Ready");

async function connectionSecret(name: string, labels: Record<string, string>): Promise<void> {
  await cluster.core.createNamespacedSecret({
    namespace,
    body: {
      metadata: { name, labels },
      stringData: {
        uri: env.RABBITMQ_MANAGEMENT_URL,
        username: env.RABBITMQ_ADMIN_USERNAME,
        password: env.RABBITMQ_ADMIN_PASSWORD,
      },
    },
  });
}

async function createQueue(name: string, queue: string, secret: string): Promise<void> {
  await custom.createNamespacedCustomObject({
    ...queues,
    namespace,
    body: {
      apiVersion: "rabbitmq.com/v1beta1",
      kind: "Queue",
      metadata: { name },
      spec: {
        name: queue,
        vhost,
        durable: true,
        rabbitmqClusterReference: { connectionSecret: { name: secret } },
      },
    },
  });
}

/** Deletes the Queue as `kubectl delete` does, and waits until it is gone. */
async function deleteQueue(name: string): Promise<void> {
  await custom.deleteNamespacedCustomObject({ ...queues, namespace, name });
  await eventually(
    `Queue ${name} gone after its deletion`,
    async () => ((await getQueue(name)) === undefined ? true : undefined),
    DELETION_MS,
  );
}

beforeAll(async () => {
  await installCrds(cluster.config);
  namespace = await freshNamespace(cluster, "topo-teardown");
  expect((await admin(`vhosts/${encodeURIComponent(vhost)}`, { method: "PUT" })).ok).toBe(true);
  operator = await OperatorProcess.start();
});

afterAll(async () => {
  // What a failed run left held: the finalizers taken off by hand, so the namespace can go.
  for (const name of ["never", "declared"]) {
    await custom
      .patchNamespacedCustomObject(
        { ...queues, namespace, name, body: { metadata: { finalizers: null } } },
        merge,
      )
      .catch(() => undefined);
  }
  await operator?.stop();
  await admin(`vhosts/${encodeURIComponent(vhost)}`, { method: "DELETE" });
  await cluster.core.deleteNamespace({ name: namespace }).catch(() => undefined);
});

describe("a Queue whose connection Secret lacks the label, deleted", () => {
  it("goes at once when it was never declared, and the broker's queue of its name stays", async () => {
    // A queue of the same name that someone else declared: the Queue object never did.
    const body = JSON.stringify({ durable: true });
    expect((await admin(queuePath("orders"), { method: "PUT", body })).ok).toBe(true);
    await connectionSecret("unlabelled", {});
    await createQueue("never", "orders", "unlabelled");
    const refused = await eventually("the Queue refused for the label", async () => {
      const queue = await getQueue("never");
      return readyOf(queue)?.message?.includes(`must carry the label ${label}`) ? queue : undefined;
    });
    expect(refused.metadata.finalizers).toEqual([finalizer]);
    expect(readyOf(refused)?.status).toBe("False");

    await deleteQueue("never");
    expect((await admin(queuePath("orders"))).status).toBe(200);
  });

  it("is deleted on the broker when it was declared before the Secret lost its label", async () => {
    await connectionSecret("labelled", { [label]: "true" });
    await createQueue("declared", "work", "labelled");
    await eventually("the Queue Ready", async () =>
      readyOf(await getQueue("declared"))?.status === "True" ? true : undefined,
    );
    expect((await admin(queuePath("work"))).status).toBe(200);

    await cluster.core.patchNamespacedSecret(
      { namespace, name: "labelled", body: { metadata: { labels: { [label]: null } } } },
      merge,
    );
    // The Secret's change wakes the Queue, which says why it is no longer served.
    await eventually("the Queue refused for the label", async () =>
      readyOf(await getQueue("declared"))?.message?.includes("must carry the label") ? true : undefined,
    );

    await deleteQueue("declared");
    expect((await admin(queuePath("work"))).status).toBe(404);
  });
});
