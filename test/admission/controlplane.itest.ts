// The ControlPlane's admission rules: exactly one message bus, which once declared stays declared, a
// published endpoint of the form host:port, and well-formed namespace assignments.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { controlPlaneKind as ref } from "../../src/api/index.ts";
import { freshNamespace, testCluster } from "../../harness/world/kube.ts";
import {
  create,
  expectOutcome,
  installKind,
  outcome,
  read,
  update,
  type Expectation,
} from "../../harness/world/admission.ts";

const exactlyOne = ["exactly one of clusterRef or secretRef must be set"];
const badEndpoint = ["publishedMessagingEndpoint must be host:port"];

const createCases: [string, Record<string, unknown>, Expectation][] = [
  ["no spec at all", {}, "admitted"],
  ["a managed bus", { infrastructure: { messaging: { clusterRef: { name: "rabbitmq" } } } }, "admitted"],
  ["a brownfield bus", { infrastructure: { messaging: { secretRef: { name: "transport" } } } }, "admitted"],
  [
    "both buses",
    { infrastructure: { messaging: { clusterRef: { name: "a" }, secretRef: { name: "b" } } } },
    exactlyOne,
  ],
  ["an empty messaging block", { infrastructure: { messaging: {} } }, exactlyOne],
  [
    "a clusterRef without name",
    { infrastructure: { messaging: { clusterRef: {} } } },
    ["clusterRef.name", "Required value"],
  ],
  ...(
    [
      ["broker.example.test:5672", "admitted"],
      ["10.0.0.7:5671", "admitted"],
      ["[fd00::1]:5672", "admitted"],
      ["[::1]:1", "admitted"],
      ["rabbit:65535", "admitted"],
      ["broker.example.test", badEndpoint],
      ["broker.example.test:0", badEndpoint],
      ["broker.example.test:65536", badEndpoint],
      ["broker.example.test:99999", badEndpoint],
      ["fd00::1:5672", badEndpoint],
      ["[fd00::1]", badEndpoint],
      ["[not-an-ip]:5672", badEndpoint],
      [":5672", badEndpoint],
      ["amqp://broker:5672", badEndpoint],
    ] as [string, Expectation][]
  ).map(([endpoint, expected]): [string, Record<string, unknown>, Expectation] => [
    `endpoint ${endpoint}`,
    { infrastructure: { publishedMessagingEndpoint: endpoint } },
    expected,
  ]),
  [
    "assignments on both kinds of cluster",
    {
      namespaceAssignments: [
        { namespace: "tenant-a", allowedRoles: ["member"] },
        { namespace: "tenant-b", targetClusterRef: { name: "edge-1" }, allowCatalogEntries: true },
      ],
    },
    "admitted",
  ],
  [
    "an assignment of a bad namespace",
    { namespaceAssignments: [{ namespace: "Bad_NS" }] },
    ["namespace", "should match"],
  ],
  [
    "an assignment without namespace",
    { namespaceAssignments: [{ allowedRoles: [] }] },
    ["namespace", "Required value"],
  ],
  [
    "a target cluster without name",
    { namespaceAssignments: [{ namespace: "tenant-a", targetClusterRef: {} }] },
    ["targetClusterRef.name", "Required value"],
  ],
];

describe("ControlPlane admission", () => {
  const cluster = testCluster("management");
  let ns = "";
  let serial = 0;
  const controlPlane = (name: string, spec: Record<string, unknown> | undefined) => ({
    apiVersion: ref.apiVersion,
    kind: ref.kind,
    metadata: { name, namespace: ns },
    ...(spec === undefined ? {} : { spec }),
  });

  beforeAll(async () => {
    await installKind(cluster, ref);
    ns = await freshNamespace(cluster, "admission-cp");
  });

  afterAll(async () => {
    await cluster.core.deleteNamespace({ name: ns }).catch(() => undefined);
  });

  it.each(createCases)("%s", async (_case, spec, expected) => {
    serial += 1;
    expectOutcome(await outcome(create(cluster, ref, ns, controlPlane(`cp-${serial}`, spec))), expected);
  });

  it("keeps a declared message bus: it may change but not go", async () => {
    const managed = { infrastructure: { messaging: { clusterRef: { name: "rabbitmq" } } } };
    await create(cluster, ref, ns, controlPlane("declared", managed));
    const removed = ["spec.infrastructure.messaging cannot be removed once declared"];
    const change = (edit: (spec: Record<string, unknown>) => void) =>
      outcome(update(cluster, ref, ns, "declared", edit));
    const infra = (s: Record<string, unknown>) => s.infrastructure as Record<string, unknown>;
    expectOutcome(await change((s) => delete infra(s).messaging), removed);
    expectOutcome(await change((s) => delete s.infrastructure), removed);
    expectOutcome(await change((s) => (infra(s).messaging = {})), exactlyOne);
    expectOutcome(
      await change((s) => (infra(s).messaging = { secretRef: { name: "transport" } })),
      "admitted",
    );
    expectOutcome(
      await change((s) => (infra(s).publishedMessagingEndpoint = "broker.example.test:5672")),
      "admitted",
    );
    expectOutcome(await change((s) => delete infra(s).publishedMessagingEndpoint), "admitted");
    expect((await read(cluster, ref, ns, "declared")).spec).toEqual({
      infrastructure: { messaging: { secretRef: { name: "transport" } } },
    });
  });

  it("lets a bus be declared later", async () => {
    await create(
      cluster,
      ref,
      ns,
      controlPlane("later", { namespaceAssignments: [{ namespace: "tenant-a" }] }),
    );
    const declare = update(cluster, ref, ns, "later", (s) => {
      s.infrastructure = { messaging: { clusterRef: { name: "rabbitmq" } } };
    });
    expectOutcome(await outcome(declare), "admitted");
  });

  it("stores namespaceAssignments as an atomic list", async () => {
    const crd = await cluster.extensions.readCustomResourceDefinition({ name: `${ref.plural}.${ref.group}` });
    const assignments =
      crd.spec.versions[0]?.schema?.openAPIV3Schema?.properties?.spec?.properties?.namespaceAssignments;
    expect(assignments?.x_kubernetes_list_type).toBe("atomic");
  });
});
