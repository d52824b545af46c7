// RabbitMQ 4.x behaviours, against the recorded answers of fixtures/rabbitmq-4x.ts (no 4.x broker runs
// here): the Vhost and Queue controllers on the real management cluster, with a RabbitmqCluster whose
// connection annotation and default-user Secret point at a local server answering as a 4.3 broker.
// A vhost protected from deletion keeps its Vhost's finalizer, with a condition and an Event naming
// the protection, until the protection is lifted; a non-durable Queue reads why the broker refuses it.
import { randomBytes } from "node:crypto";
import * as k8s from "@kubernetes/client-node";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createManagedBus, installCrds } from "../../scripts/demo/managed-bus.ts";
import { queueKind, topologyKinds, vhostKind } from "../../src/api/index.ts";
import { externalEvents } from "../../src/operator/external-events.ts";
import { hashCheck } from "../../src/orders/rabbitmq/successor-check.ts";
import { SHA512_ALGORITHM, hashPasswordSha512 } from "../../src/rabbitmq/password.ts";
import { realClock } from "../../src/runtime/base/clock.ts";
import { EventRecorder } from "../../src/runtime/port/events.ts";
import { KubeRest } from "../../src/runtime/port/kube-rest.ts";
import { RestKube } from "../../src/runtime/port/kube.ts";
import { apiPath } from "../../src/topology/broker/index.ts";
import {
  createControllerDeps,
  reconcileQueue,
  reconcileVhost,
  type ControllerDeps,
} from "../../src/topology/controller/index.ts";
import { eventually, freshNamespace } from "../support/kube.ts";
import {
  clients,
  cluster,
  condition,
  createResource,
  deleteResource,
  getResource,
  refusal,
  settle,
  tearDownNamespace,
  testSettings,
  unique,
} from "./controller-harness.ts";
import { brokerVersion } from "./fixtures/rabbitmq-4x.ts";
import { serveEverything } from "./ownership.ts";
import { Rabbitmq4xServer } from "./rabbitmq-4x-server.ts";

const username = "admin-4x";
const password = randomBytes(16).toString("hex");
const finalizer = "deletion.finalizers.vhosts.rabbitmq.com";
const logLines: string[] = [];
const logger = pino(
  { level: "debug", base: undefined },
  { write: (line: string) => void logLines.push(line) },
);
const rest = new KubeRest(cluster.kubeconfig);
const events = cluster.config.makeApiClient(k8s.EventsV1Api);

let broker: Rabbitmq4xServer;
let namespace = "";

beforeAll(async () => {
  broker = await Rabbitmq4xServer.start(username, password);
  await installCrds(cluster.config);
  namespace = await freshNamespace(cluster, "topo-4x");
  await createManagedBus(cluster.config, namespace, {
    amqpHost: "127.0.0.1",
    amqpPort: 5672,
    managementUrl: broker.url,
    adminUsername: username,
    adminPassword: password,
  });
});
afterAll(async () => {
  await tearDownNamespace(namespace, topologyKinds);
  await broker.close();
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

/** The fake broker's admin, as an operator of the broker would call it. */
const brokerAdmin = () => clients.client({ url: broker.url, username, password });

async function eventAbout(name: string, reason: string): Promise<k8s.EventsV1Event> {
  return eventually(`an Event ${reason} about ${name}`, async () => {
    const list = await events.listNamespacedEvent({ namespace });
    return list.items.find((e) => e.regarding?.name === name && e.reason === reason);
  });
}

describe(`a vhost protected from deletion (RabbitMQ ${brokerVersion})`, () => {
  it("keeps the Vhost's finalizer and says why, retried with backoff, and deletes it once the protection is lifted", async () => {
    const deps = makeDeps();
    const name = unique("protected");
    await createResource(vhostKind, namespace, name, {
      name,
      rabbitmqClusterReference: { name: "rabbitmq" },
    });
    expect((await settle(reconcileVhost, deps, namespace, name)).terminal).toBeUndefined();
    expect(condition(await getResource(vhostKind, namespace, name), "Ready")?.status).toBe("True");
    expect(broker.vhosts.has(name)).toBe(true);

    // What `rabbitmqctl enable_vhost_deletion_protection` does, through the management API.
    await brokerAdmin().post(apiPath("vhosts", name, "deletion", "protection"), undefined);
    await deleteResource(vhostKind, namespace, name);
    const first = await refusal(reconcileVhost, deps, namespace, name);
    const second = await refusal(reconcileVhost, deps, namespace, name);
    // The refusal backoff: waitingRetryMs, doubled per refusal in a row (a pass that met a write
    // conflict and was retried counts as one more).
    expect(first.retryAfterMs).toBeGreaterThanOrEqual(testSettings.waitingRetryMs ?? 0);
    expect(second.retryAfterMs).toBe(2 * (first.retryAfterMs ?? 0));
    expect(broker.count(`DELETE ${apiPath("vhosts", name)}`)).toBeGreaterThanOrEqual(2);
    expect(broker.vhosts.has(name)).toBe(true);

    const kept = await getResource(vhostKind, namespace, name);
    expect(kept?.metadata.finalizers).toEqual([finalizer]);
    const ready = condition(kept, "Ready");
    expect(ready).toMatchObject({ status: "False", reason: "FailedDelete" });
    expect(ready?.message).toContain(
      `DELETE ${apiPath("vhosts", name)}: 412 Refusing to delete virtual host '${name}' because it is protected from deletion`,
    );
    expect(ready?.message).toContain(`DELETE ${apiPath("vhosts", name, "deletion", "protection")}`);
    expect(ready?.message).toContain(`remove the finalizer ${finalizer}`);
    const event = await eventAbout(name, "FailedDelete");
    expect(event.type).toBe("Warning");
    expect(event.note).toContain("because it is protected from deletion");

    await brokerAdmin().delete(apiPath("vhosts", name, "deletion", "protection"));
    expect(await settle(reconcileVhost, deps, namespace, name)).toEqual({ outcome: {} });
    expect(await getResource(vhostKind, namespace, name)).toBeUndefined();
    expect(broker.vhosts.has(name)).toBe(false);
  });

  it("confirms a Ready vhost from 4.x's listing after a restart without declaring it again", async () => {
    const name = unique("readback");
    await createResource(vhostKind, namespace, name, {
      name,
      rabbitmqClusterReference: { name: "rabbitmq" },
    });
    await settle(reconcileVhost, makeDeps(), namespace, name);
    const puts = broker.count(`PUT ${apiPath("vhosts", name)}`);
    // New deps: a restarted process, with no memo of the declaration.
    await settle(reconcileVhost, makeDeps(), namespace, name);
    expect(broker.count("GET /api/vhosts")).toBeGreaterThanOrEqual(1);
    expect(broker.count("GET /api/vhost-limits")).toBeGreaterThanOrEqual(1);
    expect(broker.count(`PUT ${apiPath("vhosts", name)}`)).toBe(puts);
    expect(condition(await getResource(vhostKind, namespace, name), "Ready")?.status).toBe("True");
  });
});

describe(`a transient non-exclusive queue (RabbitMQ ${brokerVersion})`, () => {
  it("reads Ready False saying why the broker refuses it, and is declared when recreated durable", async () => {
    const deps = makeDeps();
    const name = unique("transient");
    await createResource(queueKind, namespace, name, {
      name,
      durable: false,
      rabbitmqClusterReference: { name: "rabbitmq" },
    });
    const refused = await refusal(reconcileQueue, deps, namespace, name);
    expect(refused.retryAfterMs).toBeGreaterThanOrEqual(testSettings.waitingRetryMs ?? 0);
    const queue = await getResource(queueKind, namespace, name);
    expect(condition(queue, "Ready")).toEqual(
      expect.objectContaining({
        status: "False",
        reason: "FailedCreateOrUpdate",
        message:
          `PUT ${apiPath("queues", "/", name)}: 400 the broker refuses non-durable queues that are not exclusive ` +
          "(deprecated feature transient_nonexcl_queues, denied by default from RabbitMQ 4.3): recreate the Queue with durable: true " +
          "(the field is immutable), or permit the feature on the broker (deprecated_features.permit.transient_nonexcl_queues = true)",
      }),
    );
    expect(queue?.status?.observedGeneration).toBeUndefined();
    expect(broker.queue("/", name)).toBeUndefined();
    const event = await eventAbout(name, "FailedCreateOrUpdate");
    expect(event.type).toBe("Warning");
    expect(event.note).toContain("transient_nonexcl_queues");

    // durable is immutable: the Queue goes (nothing on the broker to delete) and comes back durable.
    await deleteResource(queueKind, namespace, name);
    expect(await settle(reconcileQueue, deps, namespace, name)).toEqual({ outcome: {} });
    expect(await getResource(queueKind, namespace, name)).toBeUndefined();
    await createResource(queueKind, namespace, name, {
      name,
      durable: true,
      rabbitmqClusterReference: { name: "rabbitmq" },
    });
    expect((await settle(reconcileQueue, deps, namespace, name)).terminal).toBeUndefined();
    expect(condition(await getResource(queueKind, namespace, name), "Ready")?.status).toBe("True");
    expect(broker.queue("/", name)).toMatchObject({ durable: true, type: "classic" });
  });
});

describe(`the successor's hash check (RabbitMQ ${brokerVersion})`, () => {
  const login = (username: string, password: string) => ({
    host: "127.0.0.1",
    port: 5672,
    resource: "/",
    username,
    password,
  });

  it("reads the 4.x user answer again while the node asked lags the user's PUT, and accepts it", async () => {
    const name = unique("successor");
    const secret = randomBytes(18).toString("base64url");
    broker.users.set(name, {
      passwordHash: hashPasswordSha512(secret),
      hashingAlgorithm: SHA512_ALGORITHM,
      tags: [],
    });
    broker.lag(name, 2);
    const check = await hashCheck(brokerAdmin(), login(name, secret), 5_000, { reads: 4, gapMs: 50 });
    expect(check).toEqual({ accepted: true });
    expect(broker.count(`GET ${apiPath("users", name)}`)).toBe(3);
  });

  it("refuses after its reads when the broker holds another password", async () => {
    const name = unique("successor");
    const other = hashPasswordSha512(randomBytes(18).toString("base64url"));
    broker.users.set(name, { passwordHash: other, hashingAlgorithm: SHA512_ALGORITHM, tags: [] });
    const check = await hashCheck(brokerAdmin(), login(name, "not-it"), 5_000, { reads: 3, gapMs: 50 });
    expect(check).toEqual({
      accepted: false,
      reason: `the broker holds another password for user "${name}"`,
    });
    expect(broker.count(`GET ${apiPath("users", name)}`)).toBe(3);
  });
});

describe("the fake broker", () => {
  it("was asked nothing it does not answer as 4.3 does, and no log line holds its password", () => {
    expect(broker.unknown).toEqual([]);
    expect(logLines.filter((line) => line.includes(password))).toEqual([]);
  });
});
