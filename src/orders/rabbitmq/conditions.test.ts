import { describe, expect, it } from "vitest";
import {
  Reason,
  aggregateReady,
  buildConditions,
  location,
  messages,
  notOk,
  ok,
  rfc3339,
  sameConditions,
} from "./conditions.ts";

const t0 = new Date("2030-01-02T03:04:05.678Z");
const t1 = new Date("2030-01-02T03:05:00.000Z");

describe("reasons", () => {
  it("holds every reason of the seed's conditions table", () => {
    expect(Object.keys(Reason).sort()).toEqual(
      [
        "VhostProvisioned",
        "SecretStoreNotReady",
        "TopologyOperatorNotInstalled",
        "WaitingForVhost",
        "WaitingForUser",
        "VhostFailed",
        "VhostError",
        "Delivered",
        "WaitingForPassword",
        "MessagingNotPublished",
        "BackupNotSynced",
        "DeliveryRefused",
        "DeliveryError",
        "MessagingNotDeclared",
        "MessagingNotManaged",
        "WaitingForMessagingCredentials",
        "WaitingForMessaging",
        "ControlPlaneNotFound",
        "NamespaceNotAssigned",
        "ClusterNameTooLong",
        "SecretsOutOfReach",
        // Beyond the seed: a paused order (annotation c5c3.io/paused).
        "Paused",
        "AllReady",
        "NotAllReady",
      ].sort(),
    );
    for (const [k, v] of Object.entries(Reason)) expect(v).toBe(k);
  });
});

describe("messages", () => {
  it("renders the location of the management cluster and of a target cluster", () => {
    expect(location("")).toBe("the management cluster");
    expect(location("edge-1")).toBe('target cluster "edge-1"');
  });

  it("uses the reference's wording", () => {
    expect(messages.delivered("workflow-credentials", "tenant-a", "")).toBe(
      'credentials are delivered in Secret "workflow-credentials" (keys transport_url, host, port, username, password, vhost) in namespace "tenant-a" on the management cluster',
    );
    expect(messages.deliveryRefused("tenant-a", "workflow-credentials")).toBe(
      "Secret tenant-a/workflow-credentials exists and is not owned by this order; delete it or rename the order",
    );
    expect(messages.vhostFailed("workflow-cebe0e7a", "boom")).toBe(
      'the topology operator cannot create vhost "workflow-cebe0e7a": boom',
    );
    expect(messages.notAdopted("User", "openstack", "workflow-cebe0e7a-vhost-user-v1")).toBe(
      "refusing to adopt pre-existing User openstack/workflow-cebe0e7a-vhost-user-v1: it was not created by this order",
    );
  });

  it("names the release file that installs the topology operator", () => {
    expect(messages.topologyOperatorNotInstalled()).toContain(
      "deploy/flux-system/releases/messaging-topology-operator.yaml",
    );
  });
});

describe("aggregateReady", () => {
  const vhostOk = ok(Reason.VhostProvisioned, "v");
  const deliveredOk = ok(Reason.Delivered, "d");

  it("is AllReady when both sub-conditions are True", () => {
    expect(aggregateReady(vhostOk, deliveredOk)).toEqual({
      status: "True",
      reason: "AllReady",
      message: "the vhost is provisioned and its credentials are delivered",
    });
  });

  it("is NotAllReady naming the sub-conditions that are not True", () => {
    expect(aggregateReady(vhostOk, notOk(Reason.BackupNotSynced, "x"))).toEqual({
      status: "False",
      reason: "NotAllReady",
      message: "DeliveryReady is False (BackupNotSynced)",
    });
    expect(
      aggregateReady(notOk(Reason.NamespaceNotAssigned, "x"), notOk(Reason.NamespaceNotAssigned, "x"))
        .message,
    ).toBe("VhostReady is False (NamespaceNotAssigned); DeliveryReady is False (NamespaceNotAssigned)");
  });
});

describe("buildConditions", () => {
  const pass = (
    vhost = ok(Reason.VhostProvisioned, "v"),
    delivery = notOk(Reason.BackupNotSynced, "d"),
    now = t0,
  ) => buildConditions({ vhost, delivery, generation: 3, previous: [], now });

  it("builds the three conditions with the generation and the clock's time", () => {
    expect(pass()).toEqual([
      {
        type: "VhostReady",
        status: "True",
        reason: "VhostProvisioned",
        message: "v",
        observedGeneration: 3,
        lastTransitionTime: "2030-01-02T03:04:05Z",
      },
      {
        type: "DeliveryReady",
        status: "False",
        reason: "BackupNotSynced",
        message: "d",
        observedGeneration: 3,
        lastTransitionTime: "2030-01-02T03:04:05Z",
      },
      {
        type: "Ready",
        status: "False",
        reason: "NotAllReady",
        message: "DeliveryReady is False (BackupNotSynced)",
        observedGeneration: 3,
        lastTransitionTime: "2030-01-02T03:04:05Z",
      },
    ]);
  });

  it("moves lastTransitionTime only for a condition whose status changed", () => {
    const before = pass();
    const after = buildConditions({
      vhost: ok(Reason.VhostProvisioned, "v2"),
      delivery: ok(Reason.Delivered, "d"),
      generation: 3,
      previous: before,
      now: t1,
    });
    expect(after.map((c) => [c.type, c.lastTransitionTime])).toEqual([
      ["VhostReady", "2030-01-02T03:04:05Z"],
      ["DeliveryReady", "2030-01-02T03:05:00Z"],
      ["Ready", "2030-01-02T03:05:00Z"],
    ]);
    expect(after[0]?.message).toBe("v2");
  });

  it("lets a repeated pass compare equal so the status is not rewritten", () => {
    const before = pass();
    const again = buildConditions({
      vhost: ok(Reason.VhostProvisioned, "v"),
      delivery: notOk(Reason.BackupNotSynced, "d"),
      generation: 3,
      previous: before,
      now: t1,
    });
    expect(sameConditions(before, again)).toBe(true);
    expect(sameConditions(before, pass(undefined, notOk(Reason.BackupNotSynced, "other")))).toBe(false);
    expect(sameConditions(before, before.slice(1))).toBe(false);
  });

  it("formats times as metav1.Time does", () => {
    expect(rfc3339(t0)).toBe("2030-01-02T03:04:05Z");
  });
});
