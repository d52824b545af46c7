// The rabbitmq.com kinds' admission rules, which upstream enforces with a webhook and these CRDs with
// CEL: exactly one broker reference that never changes, the immutable fields of each kind, quorum
// queues durable, a Permission's user XOR userReference; plus upstream's defaults and status shape.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  bindingKind,
  exchangeKind,
  permissionKind,
  policyKind,
  queueKind,
  topologyKinds,
  userKind,
  vhostKind,
  type KindRef,
} from "../../src/api/index.ts";
import { freshNamespace, testCluster } from "../../harness/world/kube.ts";
import {
  create,
  expectOutcome,
  installKind,
  kubectl,
  outcome,
  patchStatus,
  read,
  update,
  type Expectation,
} from "../../harness/world/admission.ts";

type Spec = Record<string, unknown>;
const cluster = { name: "test" };
const base: Record<string, Spec> = {
  Vhost: { name: "v", rabbitmqClusterReference: cluster },
  User: { rabbitmqClusterReference: cluster },
  Permission: {
    vhost: "v",
    user: "u",
    permissions: { configure: ".*", write: ".*", read: ".*" },
    rabbitmqClusterReference: cluster,
  },
  Queue: { name: "q", arguments: { "x-max-length": 5 }, rabbitmqClusterReference: cluster },
  Exchange: { name: "x", rabbitmqClusterReference: cluster },
  Binding: {
    source: "x",
    destination: "q",
    destinationType: "queue",
    arguments: { "x-match": "all" },
    rabbitmqClusterReference: cluster,
  },
  Policy: {
    name: "p",
    pattern: "^q",
    definition: { "message-ttl": 1000 },
    rabbitmqClusterReference: cluster,
  },
};
const immutable = (field: string) => [`${field} is immutable`];

// Refused or admitted on create: [case, kind, spec, expectation].
const createCases: [string, KindRef, Spec, Expectation][] = [
  ...topologyKinds.flatMap((k): [string, KindRef, Spec, Expectation][] => [
    [
      `${k.kind}: both name and connectionSecret`,
      k,
      { ...base[k.kind], rabbitmqClusterReference: { name: "test", connectionSecret: { name: "s" } } },
      ["do not provide both name and connectionSecret"],
    ],
    [
      `${k.kind}: neither name nor connectionSecret`,
      k,
      { ...base[k.kind], rabbitmqClusterReference: { namespace: "rabbitmq-system" } },
      ["must provide either name or connectionSecret"],
    ],
    [
      `${k.kind}: an empty name`,
      k,
      { ...base[k.kind], rabbitmqClusterReference: { name: "" } },
      ["rabbitmqClusterReference.name", "should be at least 1 chars long"],
    ],
    [
      `${k.kind}: a connectionSecret only`,
      k,
      { ...base[k.kind], rabbitmqClusterReference: { connectionSecret: { name: "s" } } },
      "admitted",
    ],
  ]),
  [
    "Vhost: an unknown defaultQueueType",
    vhostKind,
    { ...base.Vhost, defaultQueueType: "lazy" },
    ["defaultQueueType", "Unsupported value"],
  ],
  [
    "Vhost: an unknown deletionPolicy",
    vhostKind,
    { ...base.Vhost, deletionPolicy: "Retain" },
    ["deletionPolicy", "Unsupported value"],
  ],
  ["Vhost: without name", vhostKind, { rabbitmqClusterReference: cluster }, ["spec.name", "Required value"]],
  ["User: an unknown tag", userKind, { ...base.User, tags: ["root"] }, ["tags[0]", "Unsupported value"]],
  [
    "Permission: neither user nor userReference",
    permissionKind,
    { ...base.Permission, user: undefined },
    ["must specify either spec.user or spec.userReference"],
  ],
  [
    "Permission: both user and userReference",
    permissionKind,
    { ...base.Permission, userReference: { name: "u" } },
    ["cannot specify spec.user and spec.userReference at the same time"],
  ],
  [
    "Permission: a userReference only",
    permissionKind,
    { ...base.Permission, user: undefined, userReference: { name: "u" } },
    "admitted",
  ],
  [
    "Permission: without vhost",
    permissionKind,
    { ...base.Permission, vhost: undefined },
    ["spec.vhost", "Required value"],
  ],
  [
    "Queue: quorum and not durable",
    queueKind,
    { ...base.Queue, type: "quorum", durable: false },
    ["Quorum queues must have durable set to true"],
  ],
  ["Queue: quorum with the default durable", queueKind, { ...base.Queue, type: "quorum" }, "admitted"],
  [
    "Queue: classic and not durable",
    queueKind,
    { ...base.Queue, type: "classic", durable: false },
    "admitted",
  ],
  [
    "Binding: an unknown destinationType",
    bindingKind,
    { ...base.Binding, destinationType: "topic" },
    ["destinationType", "Unsupported value"],
  ],
  [
    "Policy: an unknown applyTo",
    policyKind,
    { ...base.Policy, applyTo: "streams_only" },
    ["applyTo", "Unsupported value"],
  ],
  [
    "Policy: without definition",
    policyKind,
    { ...base.Policy, definition: undefined },
    ["spec.definition", "Required value"],
  ],
];

// Updates of an admitted object of the base spec: [case, kind, edit, expectation].
const updateCases: [string, KindRef, (s: Spec) => void, Expectation][] = [
  ...topologyKinds.flatMap((k): [string, KindRef, (s: Spec) => void, Expectation][] => [
    [
      `${k.kind}: another cluster`,
      k,
      (s) => (s.rabbitmqClusterReference = { name: "other" }),
      ["update on rabbitmqClusterReference is forbidden"],
    ],
    [
      `${k.kind}: a cluster namespace added`,
      k,
      (s) => (s.rabbitmqClusterReference = { name: "test", namespace: "x" }),
      ["update on rabbitmqClusterReference is forbidden"],
    ],
  ]),
  ["Vhost: name", vhostKind, (s) => (s.name = "w"), immutable("name")],
  [
    "Vhost: tags, limits and deletionPolicy",
    vhostKind,
    (s) => Object.assign(s, { tags: ["a"], limits: { queues: 1 }, deletionPolicy: "retain" }),
    "admitted",
  ],
  [
    "User: tags and limits",
    userKind,
    (s) => Object.assign(s, { tags: ["monitoring"], limits: { channels: 2 } }),
    "admitted",
  ],
  ["Permission: user", permissionKind, (s) => (s.user = "other"), immutable("user")],
  [
    "Permission: user to userReference",
    permissionKind,
    (s) => Object.assign(s, { user: undefined, userReference: { name: "u" } }),
    immutable("user"),
  ],
  ["Permission: vhost", permissionKind, (s) => (s.vhost = "w"), immutable("vhost")],
  [
    "Permission: permissions",
    permissionKind,
    (s) => (s.permissions = { configure: "", write: "^q", read: ".*" }),
    "admitted",
  ],
  ["Queue: name", queueKind, (s) => (s.name = "r"), immutable("name")],
  ["Queue: vhost", queueKind, (s) => (s.vhost = "v"), immutable("vhost")],
  ["Queue: type", queueKind, (s) => (s.type = "stream"), immutable("type")],
  ["Queue: durable", queueKind, (s) => (s.durable = false), immutable("durable")],
  ["Queue: autoDelete", queueKind, (s) => (s.autoDelete = true), immutable("autoDelete")],
  [
    "Queue: an argument changed",
    queueKind,
    (s) => (s.arguments = { "x-max-length": 6 }),
    immutable("arguments"),
  ],
  [
    "Queue: an argument added",
    queueKind,
    (s) => (s.arguments = { "x-max-length": 5, "x-overflow": "reject-publish" }),
    immutable("arguments"),
  ],
  ["Queue: arguments removed", queueKind, (s) => (s.arguments = undefined), immutable("arguments")],
  [
    "Queue: deleteIfEmpty, deleteIfUnused and deletionPolicy",
    queueKind,
    (s) => Object.assign(s, { deleteIfEmpty: true, deleteIfUnused: true, deletionPolicy: "retain" }),
    "admitted",
  ],
  ["Exchange: name", exchangeKind, (s) => (s.name = "y"), immutable("name")],
  ["Exchange: vhost", exchangeKind, (s) => (s.vhost = "v"), immutable("vhost")],
  ["Exchange: type", exchangeKind, (s) => (s.type = "topic"), immutable("type")],
  ["Exchange: durable", exchangeKind, (s) => (s.durable = true), immutable("durable")],
  ["Exchange: autoDelete", exchangeKind, (s) => (s.autoDelete = false), immutable("autoDelete")],
  ["Exchange: arguments", exchangeKind, (s) => (s.arguments = { "alternate-exchange": "ae" }), "admitted"],
  ["Binding: vhost", bindingKind, (s) => (s.vhost = "v"), immutable("vhost")],
  ["Binding: source", bindingKind, (s) => (s.source = "y"), immutable("source")],
  ["Binding: destination", bindingKind, (s) => (s.destination = "r"), immutable("destination")],
  [
    "Binding: destinationType",
    bindingKind,
    (s) => (s.destinationType = "exchange"),
    immutable("destinationType"),
  ],
  ["Binding: routingKey", bindingKind, (s) => (s.routingKey = "k"), immutable("routingKey")],
  [
    "Binding: an argument changed",
    bindingKind,
    (s) => (s.arguments = { "x-match": "any" }),
    immutable("arguments"),
  ],
  ["Binding: arguments removed", bindingKind, (s) => (s.arguments = undefined), immutable("arguments")],
  ["Policy: name", policyKind, (s) => (s.name = "o"), immutable("name")],
  ["Policy: vhost", policyKind, (s) => (s.vhost = "v"), immutable("vhost")],
  [
    "Policy: pattern, priority, applyTo and definition",
    policyKind,
    (s) =>
      Object.assign(s, { pattern: ".*", priority: 5, applyTo: "queues", definition: { "max-length": 10 } }),
    "admitted",
  ],
];

describe("rabbitmq.com admission", () => {
  const mgmt = testCluster("management");
  let ns = "";
  let serial = 0;
  const object = (k: KindRef, name: string, spec: Spec) => ({
    apiVersion: k.apiVersion,
    kind: k.kind,
    metadata: { name, namespace: ns },
    spec: JSON.parse(JSON.stringify(spec)) as Spec, // drops the fields a case set to undefined
  });

  beforeAll(async () => {
    for (const k of topologyKinds) await installKind(mgmt, k);
    ns = await freshNamespace(mgmt, "admission-topology");
  });

  afterAll(async () => {
    await mgmt.core.deleteNamespace({ name: ns }).catch(() => undefined);
  });

  it.each(createCases)("create, %s", async (_case, k, spec, expected) => {
    serial += 1;
    expectOutcome(await outcome(create(mgmt, k, ns, object(k, `c-${serial}`, spec))), expected);
  });

  it.each(updateCases)("update, %s", async (_case, k, edit, expected) => {
    serial += 1;
    const name = `u-${serial}`;
    expectOutcome(await outcome(create(mgmt, k, ns, object(k, name, base[k.kind] ?? {}))), "admitted");
    expectOutcome(await outcome(update(mgmt, k, ns, name, (s) => edit(s))), expected);
  });

  it("stores upstream's defaults", async () => {
    const stored = async (k: KindRef) => {
      const name = `defaults-${k.plural}`;
      await create(mgmt, k, ns, object(k, name, base[k.kind] ?? {}));
      return (await read(mgmt, k, ns, name)).spec;
    };
    expect(await stored(vhostKind)).toEqual({ ...base.Vhost, deletionPolicy: "delete" });
    expect(await stored(queueKind)).toEqual({
      ...base.Queue,
      vhost: "/",
      durable: true,
      deletionPolicy: "delete",
    });
    expect(await stored(exchangeKind)).toEqual({
      ...base.Exchange,
      vhost: "/",
      type: "direct",
      durable: false,
    });
    expect(await stored(bindingKind)).toEqual({ ...base.Binding, vhost: "/" });
    expect(await stored(policyKind)).toEqual({ ...base.Policy, vhost: "/", applyTo: "all", priority: 0 });
    expect(await stored(userKind)).toEqual(base.User);
    expect(await stored(permissionKind)).toEqual(base.Permission);
  });

  it("accepts upstream's status shape, a User's credentials and username included", async () => {
    await create(mgmt, userKind, ns, object(userKind, "with-status", base.User ?? {}));
    const status = {
      conditions: [
        {
          type: "Ready",
          status: "True",
          reason: "SuccessfulCreateOrUpdate",
          lastTransitionTime: "2026-01-01T00:00:00Z",
        },
      ],
      observedGeneration: 1,
      credentials: { name: "with-status-user-credentials" },
      username: "with-status-abc",
    };
    await patchStatus(mgmt, userKind, ns, "with-status", status);
    expect((await read(mgmt, userKind, ns, "with-status")).status).toEqual(status);
    const table = await kubectl(mgmt, ["get", "users.rabbitmq.com", "-n", ns, "with-status"]);
    expect(table.split("\n")[0]?.split(/\s+/)).toEqual(["NAME", "USERNAME", "READY", "AGE"]);
    expect(table.split("\n")[1]?.split(/\s+/).slice(0, 3)).toEqual([
      "with-status",
      "with-status-abc",
      "True",
    ]);
  });

  it("lists every kind under the rabbitmq category, each with Ready and Age columns", async () => {
    for (const k of topologyKinds) {
      const crd = await mgmt.extensions.readCustomResourceDefinition({ name: `${k.plural}.${k.group}` });
      expect(crd.spec.names.categories, k.kind).toEqual(["rabbitmq"]);
      const columns = crd.spec.versions[0]?.additionalPrinterColumns?.map((c) => c.name) ?? [];
      expect(columns.slice(-2), k.kind).toEqual(["Ready", "Age"]);
    }
    const listed = await kubectl(mgmt, ["get", "rabbitmq", "-n", ns, "-o", "name"]);
    for (const k of topologyKinds)
      expect(listed, k.kind).toContain(`${k.kind.toLowerCase()}.rabbitmq.com/defaults-${k.plural}`);
  });
});
