import { describe, expect, it } from "vitest";
import {
  admissionGate,
  controlPlaneKey,
  secretStoreGate,
  type ControlPlaneView,
  type OrderPlacement,
} from "../core/gates.ts";
import { after, backoff, decideRequeue, none, refreshOf } from "../core/requeue.ts";
import {
  busGate,
  busReadError,
  deliveryEndpointGate,
  messagingGate,
  type ManagedBus,
  type RabbitmqClusterView,
} from "./backend-gates.ts";

const order: OrderPlacement = {
  cluster: "",
  namespace: "tenant-a",
  name: "workflow",
  controlPlaneRef: { name: "cp", namespace: "openstack" },
};
const onEdge: OrderPlacement = { ...order, cluster: "edge-1" };

const cp: ControlPlaneView = {
  namespace: "openstack",
  name: "cp",
  namespaceAssignments: [
    { namespace: "tenant-a" },
    { namespace: "tenant-a", targetClusterRef: { name: "edge-1" } },
  ],
  messaging: { clusterRef: { name: "rabbitmq" } },
};

const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");
const adminPassword = "s3cr3t-admin-password";
const secret = (over: Record<string, string> = {}) => ({
  data: Object.fromEntries(
    Object.entries({
      username: "admin",
      password: adminPassword,
      host: "rabbitmq.openstack.svc",
      port: "5672",
      ...over,
    }).map(([k, v]) => [k, b64(v)]),
  ),
});
const rmq = { namespace: "openstack", name: "rabbitmq" };
const readyView: RabbitmqClusterView = {
  status: {
    defaultUser: { secretReference: { name: "rabbitmq-default-user" } },
    conditions: [{ type: "AllReplicasReady", status: "True" }],
  },
};

describe("admissionGate", () => {
  it("passes an assigned order on either cluster", () => {
    expect(admissionGate(order, cp)).toEqual({ open: true, value: cp });
    expect(admissionGate(onEdge, cp)).toEqual({ open: true, value: cp });
  });

  it("refuses a cluster name longer than 63 characters, without requeue", () => {
    const name = "c".repeat(64);
    expect(
      admissionGate({ ...order, cluster: "c".repeat(63) }, { ...cp, namespaceAssignments: [] }).open,
    ).toBe(false);
    expect(admissionGate({ ...order, cluster: name }, cp)).toEqual({
      open: false,
      gate: {
        reason: "ClusterNameTooLong",
        message: `the order lives on target cluster "${name}", whose name exceeds 63 characters and cannot be carried as a label value; nothing is provisioned for an order on that cluster`,
        wake: none,
        scope: "both",
        frozen: true,
      },
    });
  });

  it("defers an order on the management cluster whose ControlPlane is missing", () => {
    expect(admissionGate(order, undefined)).toEqual({
      open: false,
      gate: {
        reason: "ControlPlaneNotFound",
        message: "ControlPlane openstack/cp not found; the order is deferred until it exists",
        wake: after(10_000, "gate"),
        scope: "both",
        frozen: true,
      },
    });
  });

  it("resolves an empty ref namespace to the order's own", () => {
    const local = { ...order, controlPlaneRef: { name: "cp" } };
    expect(controlPlaneKey(local)).toEqual({ namespace: "tenant-a", name: "cp" });
    const result = admissionGate(local, undefined);
    expect(!result.open && result.gate.message).toBe(
      "ControlPlane tenant-a/cp not found; the order is deferred until it exists",
    );
  });

  it("reads a missing ControlPlane on a target cluster as NamespaceNotAssigned", () => {
    expect(admissionGate(onEdge, undefined)).toEqual({
      open: false,
      gate: {
        reason: "NamespaceNotAssigned",
        message:
          'ControlPlane openstack/cp assigns no namespace "tenant-a" on target cluster "edge-1" (spec.namespaceAssignments); the order is frozen: nothing is provisioned, delivered or repaired, and what was created stays',
        wake: after(60_000, "gate"),
        scope: "both",
        frozen: true,
      },
    });
  });

  it("freezes an order whose namespace is not assigned on its own cluster", () => {
    const onlyEdge = {
      ...cp,
      namespaceAssignments: [{ namespace: "tenant-a", targetClusterRef: { name: "edge-1" } }],
    };
    const result = admissionGate(order, onlyEdge);
    expect(result.open).toBe(false);
    if (!result.open) {
      expect(result.gate.reason).toBe("NamespaceNotAssigned");
      expect(result.gate.message).toBe(
        'ControlPlane openstack/cp assigns no namespace "tenant-a" on the management cluster (spec.namespaceAssignments); the order is frozen: nothing is provisioned, delivered or repaired, and what was created stays',
      );
      expect(result.gate.frozen).toBe(true);
    }
    expect(admissionGate({ ...onEdge, cluster: "edge-2" }, cp).open).toBe(false);
    expect(admissionGate(order, { ...cp, namespaceAssignments: undefined }).open).toBe(false);
  });
});

describe("messagingGate", () => {
  it("names the RabbitmqCluster of a managed bus in the ControlPlane's namespace", () => {
    expect(messagingGate(cp)).toEqual({ open: true, value: rmq });
  });

  it("refuses a ControlPlane without messaging, and a brownfield one", () => {
    const none = messagingGate({ ...cp, messaging: undefined });
    expect(!none.open && [none.gate.reason, none.gate.scope, none.gate.frozen]).toEqual([
      "MessagingNotDeclared",
      "both",
      false,
    ]);
    expect(!none.open && none.gate.message).toContain(
      "ControlPlane openstack/cp declares no spec.infrastructure.messaging",
    );
    const brownfield = messagingGate({ ...cp, messaging: { secretRef: { name: "transport" } } });
    expect(!brownfield.open && brownfield.gate.reason).toBe("MessagingNotManaged");
    expect(!brownfield.open && brownfield.gate.message).toContain("spec.infrastructure.messaging.secretRef");
  });
});

describe("busGate", () => {
  const gate = (view: RabbitmqClusterView | undefined, s: { data?: Record<string, string> } | undefined) =>
    busGate({ rabbitmqCluster: rmq, view, defaultUserSecret: s });

  it("opens on a ready cluster with a complete default-user Secret, and returns no credentials", () => {
    const result = gate(readyView, secret());
    expect(result).toEqual({
      open: true,
      value: { rabbitmqCluster: rmq, endpoint: { host: "rabbitmq.openstack.svc", port: 5672 } },
    });
    expect(JSON.stringify(result)).not.toContain(adminPassword);
  });

  it.each([
    ["no RabbitmqCluster", undefined, secret(), "waiting for RabbitmqCluster openstack/rabbitmq to exist"],
    ["no secretReference", { status: {} }, secret(), "status.defaultUser.secretReference"],
    [
      "no Secret",
      readyView,
      undefined,
      "waiting for the default-user Secret openstack/rabbitmq-default-user",
    ],
    ["an empty password", readyView, secret({ password: "" }), 'lacks "password"'],
    ["missing keys", readyView, { data: {} }, 'lacks "username", "password", "host", "port"'],
    ["a bad port", readyView, secret({ port: "0" }), 'names no usable port: port "0" is outside 1-65535'],
  ] as const)("waits for credentials with %s", (_, view, s, text) => {
    const result = gate(view, s);
    expect(result.open).toBe(false);
    if (!result.open) {
      expect(result.gate.reason).toBe("WaitingForMessagingCredentials");
      expect(result.gate.wake).toEqual(after(10_000, "gate"));
      expect(result.gate.message).toContain(text);
      expect(result.gate.message).not.toContain(adminPassword);
    }
  });

  it("reads the Secret's namespace from the reference when given", () => {
    const view = { status: { defaultUser: { secretReference: { name: "du", namespace: "elsewhere" } } } };
    const result = gate(view, undefined);
    expect(!result.open && result.gate.message).toContain("default-user Secret elsewhere/du");
  });

  it("waits for AllReplicasReady", () => {
    for (const conditions of [[], [{ type: "AllReplicasReady", status: "False" }]]) {
      const result = gate({ status: { ...readyView.status, conditions } }, secret());
      expect(result).toEqual({
        open: false,
        gate: {
          reason: "WaitingForMessaging",
          message: "waiting for RabbitmqCluster openstack/rabbitmq to report AllReplicasReady",
          wake: after(10_000, "gate"),
          scope: "both",
          frozen: false,
        },
      });
    }
  });

  it("reports a failed read as VhostError with backoff", () => {
    expect(busReadError("RabbitmqCluster openstack/rabbitmq", "connection refused")).toEqual({
      reason: "VhostError",
      message: "reading RabbitmqCluster openstack/rabbitmq failed: connection refused",
      wake: backoff("reading RabbitmqCluster openstack/rabbitmq failed: connection refused"),
      scope: "both",
      frozen: false,
    });
  });
});

describe("secretStoreGate", () => {
  it("opens when ready and otherwise sets VhostReady, a transient failure retried after 10 s", () => {
    expect(secretStoreGate({ ready: true })).toEqual({ open: true, value: true });
    expect(secretStoreGate({ ready: false, message: "OpenBao is sealed" })).toEqual({
      open: false,
      gate: {
        reason: "SecretStoreNotReady",
        message: "the secret store cannot be used, so the credentials cannot be backed up: OpenBao is sealed",
        wake: backoff(
          "the secret store cannot be used, so the credentials cannot be backed up: OpenBao is sealed",
          10_000,
        ),
        scope: "resource",
        frozen: false,
      },
    });
  });
});

describe("deliveryEndpointGate", () => {
  const bus: ManagedBus = { rabbitmqCluster: rmq, endpoint: { host: "rabbitmq.openstack.svc", port: 5672 } };

  it("delivers the in-cluster address on the management cluster", () => {
    const published = { ...cp, publishedMessagingEndpoint: "broker.example.test:5672" };
    expect(deliveryEndpointGate(order, published, bus)).toEqual({ open: true, value: bus.endpoint });
  });

  it("delivers the published endpoint on a target cluster", () => {
    const published = { ...cp, publishedMessagingEndpoint: "[fd00::1]:5671" };
    expect(deliveryEndpointGate(onEdge, published, bus)).toEqual({
      open: true,
      value: { host: "fd00::1", port: 5671 },
    });
  });

  it("reports MessagingNotPublished and DeliveryError on DeliveryReady only", () => {
    const none = deliveryEndpointGate(onEdge, cp, bus);
    expect(!none.open && [none.gate.reason, none.gate.scope]).toEqual(["MessagingNotPublished", "delivery"]);
    expect(!none.open && none.gate.message).toContain('the order lives on target cluster "edge-1"');
    const bad = deliveryEndpointGate(onEdge, { ...cp, publishedMessagingEndpoint: "broker:70000" }, bus);
    expect(!bad.open && [bad.gate.reason, bad.gate.message]).toEqual([
      "DeliveryError",
      'published messaging endpoint "broker:70000" is not a valid host:port: port "70000" is outside 1-65535',
    ]);
  });
});

describe("the target-cluster cap of the requeue policy", () => {
  it("leaves management-cluster orders alone and caps target-cluster orders at 10 minutes", () => {
    expect(decideRequeue([refreshOf(""), none])).toEqual({ requeueAfterMs: undefined });
    expect(decideRequeue([refreshOf("edge-1"), none])).toEqual({ requeueAfterMs: 600_000 });
    expect(decideRequeue([refreshOf("edge-1"), after(3_600_000, "deadline")])).toEqual({
      requeueAfterMs: 600_000,
    });
    expect(decideRequeue([refreshOf("edge-1"), after(10_000, "gate")])).toEqual({
      requeueAfterMs: 10_000,
    });
    expect(decideRequeue([refreshOf("edge-1"), backoff("m")])).toEqual({ backoff: backoff("m") });
  });
});
