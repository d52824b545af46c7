// The RabbitMQVhost admission corpus (the reference's 13 cases and more), the stored defaults, the status
// schema and the printer columns, on both clusters: a target cluster serves the kind from the same CRD.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rabbitMQVhostKind as ref } from "../../src/api/index.ts";
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

function order(namespace: string, name: string, spec: Record<string, unknown>) {
  return { apiVersion: ref.apiVersion, kind: ref.kind, metadata: { name, namespace }, spec };
}

// The reference's scaffold: an order on a ControlPlane that does not exist, mutated once per case.
const scaffold = (extra: Record<string, unknown> = {}) => ({
  controlPlaneRef: { name: "cp-invalid-cr-absent" },
  ...extra,
});

const createCases: [string, string, Record<string, unknown>, Expectation][] = [
  [
    "00 passwordGeneration 0",
    "case-00",
    scaffold({ passwordGeneration: 0 }),
    ["passwordGeneration", "should be greater than or equal to 1"],
  ],
  ["01 name of 64 bytes", "n".repeat(64), scaffold(), ["metadata.name must be at most 63 bytes"]],
  ["02 ref without name", "case-02", { controlPlaneRef: {} }, ["controlPlaneRef.name", "Required value"]],
  [
    "03 ref namespace Bad_NS",
    "case-03",
    scaffold({ controlPlaneRef: { name: "cp", namespace: "Bad_NS" } }),
    ["namespace", "should match"],
  ],
  [
    "04 deletionPolicy Drop",
    "case-04",
    scaffold({ deletionPolicy: "Drop" }),
    ["deletionPolicy", "Unsupported value"],
  ],
  [
    "05 interval 30s, grace 0s",
    "case-05",
    scaffold({ rotation: { interval: "30s", gracePeriod: "0s" } }),
    ["rotation.interval is 0s or at least 1m"],
  ],
  [
    "06 interval 1h, grace 1h",
    "case-06",
    scaffold({ rotation: { interval: "1h", gracePeriod: "1h" } }),
    ["rotation.gracePeriod must be shorter than rotation.interval"],
  ],
  [
    "07 grace -1h",
    "case-07",
    scaffold({ rotation: { gracePeriod: "-1h" } }),
    ["rotation.gracePeriod is not negative"],
  ],
  [
    "08 interval 87601h",
    "case-08",
    scaffold({ rotation: { interval: "87601h" } }),
    ["rotation.interval is at most 87600h"],
  ],
  // Beyond the reference's table: the edges of each rule.
  ["name of 63 bytes", "m".repeat(63), scaffold(), "admitted"],
  ["no ref at all", "no-ref", {}, ["controlPlaneRef", "Required value"]],
  [
    "empty ref name",
    "empty-ref",
    { controlPlaneRef: { name: "" } },
    ["controlPlaneRef.name", "should be at least 1 chars long"],
  ],
  [
    "schedule off with the default grace",
    "schedule-off",
    scaffold({ rotation: { interval: "0s" } }),
    "admitted",
  ],
  [
    "interval 1m, grace 0s",
    "one-minute",
    scaffold({ rotation: { interval: "1m", gracePeriod: "0s" } }),
    "admitted",
  ],
  ["interval 87600h", "ten-years", scaffold({ rotation: { interval: "87600h" } }), "admitted"],
  [
    "interval 24h with the default grace of 24h",
    "day",
    scaffold({ rotation: { interval: "24h" } }),
    ["rotation.gracePeriod must be shorter than rotation.interval"],
  ],
  [
    "interval not a duration",
    "words",
    scaffold({ rotation: { interval: "three minutes" } }),
    ["rotation.interval", "should match"],
  ],
  ["deletionPolicy Delete", "delete-policy", scaffold({ deletionPolicy: "Delete" }), "admitted"],
  [
    "ref in another namespace",
    "elsewhere",
    scaffold({ controlPlaneRef: { name: "cp", namespace: "openstack" } }),
    "admitted",
  ],
  // Issue 44: a nanosecond timestamp is refused; the bound keeps every rotation after it exact.
  [
    "passwordGeneration above 10^15",
    "nanos",
    scaffold({ passwordGeneration: 1733000000000000000 }),
    ["passwordGeneration", "should be less than or equal to"],
  ],
  ["passwordGeneration 10^15", "micros", scaffold({ passwordGeneration: 1e15 }), "admitted"],
];

describe.each(["management", "target"] as const)(
  "RabbitMQVhost admission on the %s cluster",
  (clusterName) => {
    const cluster = testCluster(clusterName);
    let ns = "";

    beforeAll(async () => {
      await installKind(cluster, ref);
      ns = await freshNamespace(cluster, "admission-rmv");
    });

    afterAll(async () => {
      await cluster.core.deleteNamespace({ name: ns }).catch(() => undefined);
    });

    it.each(createCases)("case %s", async (_case, name, spec, expected) => {
      expectOutcome(await outcome(create(cluster, ref, ns, order(ns, name, spec))), expected);
    });

    it("cases 09 to 12: the ref is immutable and passwordGeneration only increases", async () => {
      const name = "rmv-immutable";
      expectOutcome(
        await outcome(create(cluster, ref, ns, order(ns, name, scaffold({ passwordGeneration: 2 })))),
        "admitted",
      );
      const change = (edit: (spec: Record<string, unknown>) => void) =>
        outcome(update(cluster, ref, ns, name, edit));
      const refOf = (spec: Record<string, unknown>) => spec.controlPlaneRef as Record<string, unknown>;
      expectOutcome(await change((s) => (refOf(s).name = "cp-other")), [
        "controlPlaneRef.name is immutable; delete and re-create the RabbitMQVhost to move it to another ControlPlane",
      ]);
      expectOutcome(await change((s) => (refOf(s).namespace = "openstack")), [
        "controlPlaneRef.namespace is immutable",
      ]);
      expectOutcome(await change((s) => (s.passwordGeneration = 1)), [
        "passwordGeneration may only increase",
      ]);
      // What may change: a higher generation, the schedule and the policy.
      expectOutcome(await change((s) => (s.passwordGeneration = 3)), "admitted");
      expectOutcome(await change((s) => (s.rotation = { interval: "0s" })), "admitted");
      expectOutcome(await change((s) => (s.deletionPolicy = "Delete")), "admitted");
    });

    it("keeps a declared ref namespace immutable, removing it included", async () => {
      const name = "rmv-namespaced";
      const spec = { controlPlaneRef: { name: "cp", namespace: "openstack" } };
      expectOutcome(await outcome(create(cluster, ref, ns, order(ns, name, spec))), "admitted");
      const refOf = (s: Record<string, unknown>) => s.controlPlaneRef as Record<string, unknown>;
      expectOutcome(await outcome(update(cluster, ref, ns, name, (s) => delete refOf(s).namespace)), [
        "controlPlaneRef.namespace is immutable",
      ]);
      expectOutcome(await outcome(update(cluster, ref, ns, name, (s) => (refOf(s).namespace = "other"))), [
        "controlPlaneRef.namespace is immutable",
      ]);
    });

    it("stores the defaults as written: 720h, 24h, Retain, generation 1, rotation {}", async () => {
      await create(cluster, ref, ns, order(ns, "defaults", { controlPlaneRef: { name: "cp" } }));
      expect((await read(cluster, ref, ns, "defaults")).spec).toEqual({
        controlPlaneRef: { name: "cp" },
        passwordGeneration: 1,
        rotation: { interval: "720h", gracePeriod: "24h" },
        deletionPolicy: "Retain",
      });
      // A partial rotation block gets the other default.
      await create(
        cluster,
        ref,
        ns,
        order(ns, "partial", { controlPlaneRef: { name: "cp" }, rotation: { interval: "48h" } }),
      );
      expect((await read(cluster, ref, ns, "partial")).spec).toMatchObject({
        rotation: { interval: "48h", gracePeriod: "24h" },
      });
    });

    it("accepts the status the operator writes and refuses a malformed condition", async () => {
      await create(cluster, ref, ns, order(ns, "with-status", { controlPlaneRef: { name: "cp" } }));
      const status = {
        conditions: [
          {
            type: "VhostReady",
            status: "True",
            reason: "VhostProvisioned",
            message: "",
            lastTransitionTime: "2026-01-01T00:00:00Z",
          },
          {
            type: "Ready",
            status: "True",
            reason: "AllReady",
            message: "",
            lastTransitionTime: "2026-01-01T00:00:00Z",
          },
        ],
        observedGeneration: 1,
        vhost: "with-status-0123abcd",
        username: "with-status-0123abcd-v1",
        host: "rabbitmq.openstack.svc",
        port: 5672,
        backend: "rabbitmq-b",
        passwordGeneration: 1,
        lastRotation: "2026-01-01T00:00:00Z",
        nextRotation: "2026-01-31T00:00:00Z",
        migration: { from: "rabbitmq", to: "rabbitmq-b", phase: "Draining" },
        secretName: "with-status-credentials",
        secretKeys: ["transport_url", "host", "port", "username", "password", "vhost"],
      };
      await patchStatus(cluster, ref, ns, "with-status", status);
      expect((await read(cluster, ref, ns, "with-status")).status).toEqual(status);
      const bad = {
        conditions: [
          {
            type: "Ready",
            status: "Maybe",
            reason: "AllReady",
            message: "",
            lastTransitionTime: "2026-01-01T00:00:00Z",
          },
        ],
      };
      expectOutcome(await outcome(patchStatus(cluster, ref, ns, "with-status", bad)), [
        "status.conditions[0].status",
        "Unsupported value",
      ]);
    });

    it("shows the eight printer columns in kubectl get", async () => {
      const crd = await cluster.extensions.readCustomResourceDefinition({
        name: `${ref.plural}.${ref.group}`,
      });
      expect(crd.spec.versions[0]?.additionalPrinterColumns?.map((c) => c.name)).toEqual([
        "Ready",
        "ControlPlane",
        "Vhost",
        "Broker",
        "Migration",
        "Generation",
        "NextRotation",
        "Age",
      ]);
      const table = await kubectl(cluster, ["get", ref.plural, "-n", ns, "with-status", "-o", "wide"]);
      const [header, row] = table.trim().split("\n");
      expect(header?.split(/\s+/)).toEqual([
        "NAME",
        "READY",
        "CONTROLPLANE",
        "VHOST",
        "BROKER",
        "MIGRATION",
        "GENERATION",
        "NEXTROTATION",
        "AGE",
      ]);
      expect(row?.split(/\s+/).slice(0, 8)).toEqual([
        "with-status",
        "True",
        "cp",
        "with-status-0123abcd",
        "rabbitmq-b",
        "Draining",
        "1",
        "2026-01-31T00:00:00Z",
      ]);
    });
  },
);
