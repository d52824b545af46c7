// RabbitMQ 4.x's deprecated features, through the Queue and Policy controllers on the real local nodes
// (rabbitmq-4x-nodes.ts): a feature the broker denies (or removed) is a clear condition on the Queue or
// Policy that needs it, and heals once the key is replaced; and the successor's hash check against 4.3.
// The one made-up answer is the hash check's lagging node, which needs a cluster of several nodes.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { policyKind, queueKind } from "../../src/api/index.ts";
import { hashCheck } from "../../src/orders/rabbitmq/successor-check.ts";
import { apiPath, SHA512_ALGORITHM, hashPasswordSha512 } from "../../src/topology/broker/index.ts";
import { topologyKind } from "../../src/topology/index.ts";
import {
  clients,
  createResource,
  deleteResource,
  patchSpec,
  refusal,
  settle,
  testSettings,
  unique,
} from "./controller-harness.ts";
import {
  admin,
  eventAbout,
  expectReady,
  featuresAnswer,
  makeDeps,
  namespace,
  nodes,
  passwordsInLogs,
  policyAnswer,
  proxy,
  queueAnswer,
  readyVhost,
  ref,
  refusedCondition,
  setUpNodes,
  type NodeName,
  tearDownNodes,
} from "./rabbitmq-4x-nodes.ts";

beforeAll(setUpNodes);
afterAll(tearDownNodes);

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
    expect(passwordsInLogs()).toEqual([]);
  });
});
