// RabbitMQ 4.x and its vhosts, through the Vhost and Queue controllers on the real local nodes
// (rabbitmq-4x-nodes.ts): a vhost protected from deletion on 4.3 keeps its Vhost's finalizer with a
// condition naming the protection, and 4.0 and 3.10 have no such protection; a vhost's default queue
// type is set, given to a queue declared without a type, and repaired on drift, where 3.10 and 4.x
// differ.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { queueKind, vhostKind } from "../../src/api/index.ts";
import { ManagementApiError, apiPath } from "../../src/topology/broker/index.ts";
import { topologyKind } from "../../src/topology/index.ts";
import {
  condition,
  createResource,
  deleteResource,
  getResource,
  patchSpec,
  refusal,
  settle,
  testSettings,
  unique,
} from "./controller-harness.ts";
import {
  admin,
  afterVerification,
  allNodes,
  eventAbout,
  expectReady,
  finalizer,
  makeDeps,
  made,
  namespace,
  nodes,
  passwordsInLogs,
  proxy,
  queueAnswer,
  readyVhost,
  ref,
  refusedCondition,
  setUpNodes,
  tearDownNodes,
  vhostAnswer,
} from "./rabbitmq-4x-nodes.ts";

beforeAll(setUpNodes);
afterAll(tearDownNodes);

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

describe("the logs", () => {
  it("hold no administrator password", () => {
    expect(passwordsInLogs()).toEqual([]);
  });
});
