// The reference's multicluster scenario with the operator process: the local target cluster registered
// as `target-b` by a kubeconfig Secret carrying the token of deploy/target-cluster-access's ServiceAccount
// (so the operator works there with exactly the chart's RBAC), an order `workflow` on it whose children
// live on the management cluster, delivery once the ControlPlane publishes the local broker's address,
// an AMQP login with what the target holds, a rotation, and a deletion that leaves nothing behind.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backupPath, deliveredSecretName, orderHash } from "../src/orders/core/naming.ts";
import {
  RABBITMQ_NAMING,
  userChildName,
  userName,
  vhostChildName,
  vhostName,
} from "../src/orders/rabbitmq/naming.ts";
import { eventually } from "../harness/world/kube.ts";
import { amqpLogin } from "../harness/probes/login-prober.ts";
import { OperatorProcess } from "../harness/operator/operator-process.ts";
import { openBaoRead } from "../harness/world/order-env.ts";
import {
  applyOrder,
  brokerApi,
  condition,
  createTargetWorld,
  deleteOrder,
  destroyTargetWorld,
  isReady,
  managementChildren,
  operatorView,
  publishEndpoint,
  readOrder,
  readSecret,
  waitForOrder,
  type TargetWorld,
} from "../harness/world/target-cluster.ts";

const ORDER = "workflow";
const GRACE_MS = 15_000;

describe("an order on target cluster target-b, operator process", () => {
  let world: TargetWorld | undefined;
  let operator: OperatorProcess | undefined;
  /** Every password and transport URL the test saw; none may appear in the logs or the status. */
  const secrets = new Set<string>();

  const w = (): TargetWorld => {
    if (!world) throw new Error("no world");
    return world;
  };
  const tenant = () => w().assigned[0] ?? "";
  const key = () => ({ cluster: w().clusterName, namespace: tenant(), name: ORDER });
  const spec = (passwordGeneration = 1) => ({
    rotation: { interval: "0s", gracePeriod: `${GRACE_MS / 1000}s` },
    deletionPolicy: "Delete",
    passwordGeneration,
  });
  const order = () => readOrder(w().target, tenant(), ORDER);
  const waitFor = (what: string, done: Parameters<typeof waitForOrder>[4], timeoutMs = 60_000) =>
    waitForOrder(w().target, tenant(), ORDER, what, done, timeoutMs);
  const delivered = async () => {
    const found = await readSecret(w().target, tenant(), deliveredSecretName({ name: ORDER }));
    for (const k of ["password", "transport_url"]) if (found?.data[k]) secrets.add(found.data[k]);
    return found;
  };

  beforeAll(async () => {
    world = await createTargetWorld("mc");
    // The AMQP login as the successor check (the default, the stored hash, runs in the other files).
    operator = await OperatorProcess.start({
      clusterSecretNamespace: world.secretNs,
      args: ["--successor-check=amqp"],
    });
  }, 15 * 60_000);

  afterAll(async () => {
    try {
      await destroyTargetWorld(world);
    } finally {
      await operator?.stop();
    }
  }, 180_000);

  it("provisions on the management cluster and reads MessagingNotPublished with nothing published", async () => {
    // The registration carries the chart's ServiceAccount token and the target's CA, nothing more.
    const view = operatorView(w());
    expect(view.getCurrentUser()).toMatchObject({ name: "vhost-broker", token: expect.any(String) });
    expect(view.getCurrentUser()?.certData).toBeUndefined();
    expect(view.getCurrentCluster()?.caData).toBeTruthy();
    expect(view.getCurrentCluster()?.skipTLSVerify).toBeFalsy();

    await applyOrder(w(), { namespace: tenant() }, ORDER, spec());
    const o = await waitFor(
      "VhostReady True and DeliveryReady MessagingNotPublished",
      (o) =>
        condition(o, "VhostReady")?.status === "True" &&
        condition(o, "DeliveryReady")?.reason === "MessagingNotPublished",
      120_000,
    );
    expect(condition(o, "DeliveryReady")?.status).toBe("False");
    expect(condition(o, "Ready")?.status).toBe("False");
    expect(o?.metadata?.finalizers).toContain("c5c3.io/rabbitmqvhost-teardown");
    // The target's name is in the hash: the same order on the management cluster would be another vhost.
    expect(o?.status?.vhost).toBe(`${ORDER}-${orderHash(key())}`);
    expect(o?.status?.vhost).not.toBe(vhostName({ ...key(), cluster: "" }));
    // The user exists on the broker, but the status names a user only once a delivered Secret carries it.
    expect(condition(o, "VhostReady")?.message).toContain(
      `the delivered Secret does not carry user "${userName(key(), 1)}" yet`,
    );
    expect(o?.status?.username).toBeUndefined();
    expect(o?.status?.passwordGeneration).toBeUndefined();

    // The children live beside the broker, labelled with the target's name, owned by nobody.
    const labels = {
      "c5c3.io/rabbitmqvhost-cluster": "target-b",
      "c5c3.io/rabbitmqvhost-namespace": tenant(),
      "c5c3.io/rabbitmqvhost-name": ORDER,
    };
    const children = {
      vhosts: await managementChildren(w(), key(), "vhosts"),
      users: await managementChildren(w(), key(), "users"),
      permissions: await managementChildren(w(), key(), "permissions"),
      secrets: await managementChildren(w(), key(), "secrets"),
    };
    expect(children.vhosts.map((c) => c.metadata?.name)).toEqual([vhostChildName(key())]);
    expect(children.users.map((c) => c.metadata?.name)).toEqual([userChildName(key(), 1)]);
    expect(children.permissions).toHaveLength(1);
    expect(children.secrets.length).toBeGreaterThanOrEqual(1);
    for (const child of Object.values(children).flat()) {
      expect(child.metadata?.labels).toMatchObject(labels);
      expect(child.metadata?.ownerReferences ?? []).toEqual([]);
    }
    // Nothing is delivered without an address the target can reach.
    expect(await delivered()).toBeUndefined();
  }, 150_000);

  it("delivers the published endpoint on the target, and the delivered credentials log in", async () => {
    const endpoint = { host: "127.0.0.1", port: w().broker.amqpPort };
    // The ControlPlane's change reaches the order on the target at once, not at its 10-minute refresh.
    await publishEndpoint(w(), `${endpoint.host}:${endpoint.port}`);
    const o = await waitFor("Ready", isReady, 60_000);
    expect([o?.status?.host, o?.status?.port]).toEqual([endpoint.host, endpoint.port]);
    expect(o?.status?.secretName).toBe(`${ORDER}-credentials`);

    const found = await delivered();
    if (!found) throw new Error("no delivered Secret on the target");
    const owners = found.secret.metadata?.ownerReferences ?? [];
    expect(owners).toEqual([
      expect.objectContaining({
        kind: "RabbitMQVhost",
        name: ORDER,
        uid: o?.metadata?.uid,
        controller: true,
      }),
    ]);
    expect(found.secret.metadata?.labels).toMatchObject({
      "c5c3.io/rabbitmqvhost-name": ORDER,
      "c5c3.io/rabbitmqvhost-namespace": tenant(),
    });
    expect(Object.keys(found.data).sort()).toEqual([
      "host",
      "password",
      "port",
      "transport_url",
      "username",
      "vhost",
    ]);
    expect([found.data["host"], found.data["port"]]).toEqual([endpoint.host, String(endpoint.port)]);
    expect(found.data["username"]).toBe(userName(key(), 1));
    expect(found.data["transport_url"]).toContain(`@${endpoint.host}:${endpoint.port}/`);
    expect(await openBaoRead(backupPath(RABBITMQ_NAMING, key(), w().cpNs))).toEqual(found.data);
    expect(await amqpLogin(found.data["transport_url"] ?? "")).toEqual({ kind: "ok" });
  }, 90_000);

  it("rotates a target order: the successor is delivered on the target, the old user refused after the grace", async () => {
    const v1 = await delivered();
    await applyOrder(w(), { namespace: tenant() }, ORDER, spec(2));
    const o = await waitFor("generation 2 Ready", (o) => o?.status?.passwordGeneration === 2 && isReady(o));
    expect(o?.status?.previousPasswordGeneration).toBe(1);
    expect(o?.status?.nextRotation).toBeUndefined();
    const v2 = await eventually("the target's Secret to carry generation 2", async () => {
      const found = await delivered();
      return found?.data["username"] === userName(key(), 2) ? found : undefined;
    });
    expect(v2.data["password"]).not.toBe(v1?.data["password"]);
    expect(await amqpLogin(v2.data["transport_url"] ?? "")).toEqual({ kind: "ok" });
    const deleteAt = Date.parse(o?.status?.previousPasswordDeleteAt ?? "");
    if (Date.now() < deleteAt - 2_000) {
      expect(await amqpLogin(v1?.data["transport_url"] ?? "")).toEqual({ kind: "ok" });
    }
    // The sweep is a requeue at previousPasswordDeleteAt on the target. No login fails before it.
    const firstFailure = await eventually(
      "the old user's first failed login",
      async () => {
        const outcome = await amqpLogin(v1?.data["transport_url"] ?? "");
        return outcome.kind === "ok" ? undefined : { outcome, at: Date.now() };
      },
      GRACE_MS + 30_000,
      1_000,
    );
    expect(firstFailure.at).toBeGreaterThanOrEqual(deleteAt);
    // The sweep deletes the Permission and the User together: while only the Permission is gone from the
    // broker, the vhost is refused rather than the login. In the end the broker refuses the credentials.
    await eventually(
      "the broker to refuse the old user's credentials",
      async () => ((await amqpLogin(v1?.data["transport_url"] ?? "")).kind === "auth" ? true : undefined),
      30_000,
      1_000,
    );
    const swept = await waitFor(
      "the sweep",
      (o) => o?.status?.previousPasswordGeneration === undefined && isReady(o),
    );
    expect(swept?.status?.passwordGeneration).toBe(2);
    const users = await managementChildren(w(), key(), "users");
    expect(users.map((u) => u.metadata?.name)).toEqual([userChildName(key(), 2)]);
    expect(await amqpLogin(v2.data["transport_url"] ?? "")).toEqual({ kind: "ok" });
  }, 120_000);

  it("writes no password or transport URL into the logs, the status or the Events on the target", async () => {
    expect(secrets.size).toBeGreaterThanOrEqual(4);
    // The chart grants events in the assigned namespaces: the order's transitions are recorded there.
    const events = (await w().target.core.listNamespacedEvent({ namespace: tenant() })).items.filter(
      (e) => e.involvedObject.name === ORDER,
    );
    expect(events.map((e) => e.reason)).toContain("Rotated");
    const texts = {
      logs: operator?.logs() ?? "",
      order: JSON.stringify(await order()),
      events: JSON.stringify(events),
    };
    expect(texts.logs.length).toBeGreaterThan(0);
    for (const [where, text] of Object.entries(texts)) {
      for (const secret of secrets) {
        for (const form of [secret, encodeURIComponent(secret)]) {
          expect(text.includes(form), `a secret in the ${where}`).toBe(false);
        }
      }
    }
  });

  it("deleting the order removes its children, the backup, the delivered Secret and the vhost", async () => {
    const vhost = vhostName(key());
    await deleteOrder(w(), { namespace: tenant() }, ORDER);
    await waitFor("the order to be gone", (o) => o === undefined, 60_000);
    for (const plural of ["vhosts", "users", "permissions", "secrets"]) {
      expect(await managementChildren(w(), key(), plural), plural).toEqual([]);
    }
    expect(await openBaoRead(backupPath(RABBITMQ_NAMING, key(), w().cpNs))).toBeUndefined();
    await eventually(
      "the delivered Secret to be gone",
      async () => ((await delivered()) ? undefined : true),
      30_000,
    );
    await eventually("the vhost to be gone from the broker", async () => {
      const res = await brokerApi(w(), "GET", `/api/vhosts/${encodeURIComponent(vhost)}`);
      await res.arrayBuffer();
      return res.status === 404 ? true : undefined;
    });
  }, 90_000);
});
