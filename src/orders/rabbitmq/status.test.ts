import { describe, expect, it } from "vitest";
import type { OrderStatus as RabbitMQVhostStatus } from "../core/kind.ts";
import * as core from "../core/status.ts";
import { eventTypes, messages, notOk, ok, Reason, type ConditionState } from "./conditions.ts";
import { DELIVERED_KEYS } from "./delivered-data.ts";

// The core's status functions in the RabbitMQVhost order's shape and words.
const shape: core.StatusShape = {
  resourceCondition: "VhostReady",
  resourceStatusField: "vhost",
  deliveredKeys: DELIVERED_KEYS,
  allReady: messages.allReady(),
  backendKind: "RabbitmqCluster",
  eventTypes,
};
interface Update {
  vhostReady: ConditionState;
  deliveryReady: ConditionState;
  vhost?: string;
  rotation?: core.StatusUpdate["rotation"];
  delivery?: core.StatusUpdate["delivered"];
}
const assembleStatus = (
  previous: RabbitMQVhostStatus | undefined,
  u: Update,
  generation: number,
  now: Date,
) =>
  core.assembleStatus(
    shape,
    previous,
    {
      resource: u.vhostReady,
      delivery: u.deliveryReady,
      resourceName: u.vhost,
      rotation: u.rotation,
      delivered: u.delivery,
    },
    generation,
    now,
  );
const statusChanged = (before: RabbitMQVhostStatus | undefined, after: RabbitMQVhostStatus) =>
  core.statusChanged(shape, before, after);
const transitionEvents = (before: RabbitMQVhostStatus | undefined, after: RabbitMQVhostStatus) =>
  core.transitionEvents(shape, before, after);

const T0 = new Date("2030-01-01T00:00:00Z");
const T1 = new Date("2030-01-01T00:01:00Z");
const provisioned = ok(Reason.VhostProvisioned, "vhost up");
const delivered = ok(Reason.Delivered, "delivered");
const waiting = notOk(Reason.WaitingForPassword, "waiting");

describe("assembleStatus", () => {
  const full = assembleStatus(
    undefined,
    {
      vhostReady: provisioned,
      deliveryReady: delivered,
      vhost: "workflow-cebe0e7a",
      rotation: {
        state: { passwordGeneration: 1, lastRotation: T0, nextRotation: T1 },
        username: "workflow-cebe0e7a-v1",
      },
      delivery: { host: "127.0.0.1", port: 5672, secretName: "workflow-credentials" },
    },
    3,
    T0,
  );

  it("fills every field of the seed in the reference's order", () => {
    expect(Object.keys(full)).toEqual([
      "conditions",
      "observedGeneration",
      "vhost",
      "username",
      "host",
      "port",
      "passwordGeneration",
      "lastRotation",
      "nextRotation",
      "secretName",
      "secretKeys",
    ]);
    expect(full.secretKeys).toEqual(["transport_url", "host", "port", "username", "password", "vhost"]);
    expect(full.lastRotation).toBe("2030-01-01T00:00:00Z");
    expect(full.conditions?.map((c) => [c.type, c.status, c.reason])).toEqual([
      ["VhostReady", "True", "VhostProvisioned"],
      ["DeliveryReady", "True", "Delivered"],
      ["Ready", "True", "AllReady"],
      ["Reconciling", "False", "Reconciled"],
      ["Stalled", "False", "NotStalled"],
    ]);
  });

  it("reads a rotation the spec asks for as Reconciling, and a refusal as Stalled", () => {
    const health = (status: typeof full) =>
      status.conditions
        ?.filter((c) => ["Reconciling", "Stalled"].includes(c.type))
        .map((c) => [c.status, c.reason]);
    const asked = core.assembleStatus(shape, full, { resource: provisioned, delivery: delivered }, 4, T1, 2);
    expect(health(asked)).toEqual([
      ["True", "RotationInProgress"],
      ["False", "NotStalled"],
    ]);
    const refused = assembleStatus(
      full,
      { vhostReady: notOk(Reason.VhostFailed, "refused"), deliveryReady: delivered },
      4,
      T1,
    );
    expect(health(refused)).toEqual([
      ["False", "Stalled"],
      ["True", "VhostFailed"],
    ]);
    // A wait and a failure the operator retries by itself are Reconciling, never Stalled.
    for (const state of [notOk(Reason.WaitingForUser, "w"), notOk(Reason.VhostError, "e")]) {
      const waiting = assembleStatus(full, { vhostReady: state, deliveryReady: delivered }, 4, T1);
      expect(health(waiting)).toEqual([
        ["True", "NotAllReady"],
        ["False", "NotStalled"],
      ]);
    }
  });

  it("keeps lastTransitionTime for an unchanged status and moves it on a change", () => {
    const later = assembleStatus(full, { vhostReady: provisioned, deliveryReady: waiting }, 3, T1);
    const time = (type: string) => later.conditions?.find((c) => c.type === type)?.lastTransitionTime;
    expect(time("VhostReady")).toBe("2030-01-01T00:00:00Z");
    expect(time("DeliveryReady")).toBe("2030-01-01T00:01:00Z");
  });

  it("keeps the fields a gated pass does not speak of, and clears the Secret fields when it is not delivered", () => {
    const gated = assembleStatus(
      full,
      {
        vhostReady: notOk(Reason.NamespaceNotAssigned, "x"),
        deliveryReady: notOk(Reason.NamespaceNotAssigned, "x"),
      },
      3,
      T1,
    );
    expect(gated.secretName).toBe("workflow-credentials");
    expect(gated.passwordGeneration).toBe(1);
    const undelivered = assembleStatus(
      full,
      { vhostReady: provisioned, deliveryReady: waiting, delivery: "none" },
      3,
      T1,
    );
    expect(undelivered.secretName).toBeUndefined();
    expect(undelivered.secretKeys).toBeUndefined();
    expect(undelivered.host).toBe("127.0.0.1");
  });

  it("is unchanged when a pass finds the same, so no status is written", () => {
    const again = assembleStatus(full, { vhostReady: provisioned, deliveryReady: delivered }, 3, T1);
    expect(statusChanged(full, again)).toBe(false);
    expect(statusChanged(full, { ...again, observedGeneration: 4 })).toBe(true);
    const rotated = assembleStatus(
      full,
      {
        vhostReady: provisioned,
        deliveryReady: delivered,
        rotation: { state: { passwordGeneration: 2, lastRotation: T1 }, username: "u2" },
      },
      3,
      T1,
    );
    expect(statusChanged(full, rotated)).toBe(true);
  });
});

describe("transitionEvents", () => {
  const base = assembleStatus(undefined, { vhostReady: provisioned, deliveryReady: delivered }, 1, T0);

  it("says the Normal transitions of one write in one event, and each Warning on its own", () => {
    expect(transitionEvents(undefined, base)).toEqual([
      { type: "Normal", reason: "VhostProvisioned", message: "vhost up; delivered" },
    ]);
    const first = { ...base, passwordGeneration: 1, username: "w-v1" };
    expect(transitionEvents(undefined, first)).toEqual([
      {
        type: "Normal",
        reason: "UserProvisioned",
        message: 'user "w-v1" (generation 1) is the delivered user; vhost up; delivered',
      },
    ]);
    const failing = assembleStatus(
      undefined,
      { vhostReady: notOk(Reason.VhostFailed, "f"), deliveryReady: waiting },
      1,
      T0,
    );
    expect(transitionEvents(undefined, failing).map((e) => [e.type, e.reason])).toEqual([
      ["Warning", "VhostFailed"],
      ["Normal", "WaitingForPassword"],
    ]);
    const refused = assembleStatus(
      base,
      { vhostReady: provisioned, deliveryReady: notOk(Reason.DeliveryRefused, "m") },
      1,
      T1,
    );
    expect(transitionEvents(base, refused)).toEqual([
      { type: "Warning", reason: "DeliveryRefused", message: "m" },
    ]);
  });

  it("makes a wait Normal, a transient failure no event, and a failure that needs a person a Warning", () => {
    const wait = assembleStatus(
      base,
      { vhostReady: notOk(Reason.WaitingForUser, "w"), deliveryReady: delivered },
      1,
      T1,
    );
    expect(transitionEvents(base, wait)).toEqual([
      { type: "Normal", reason: "WaitingForUser", message: "w" },
    ]);
    const outage = assembleStatus(
      base,
      {
        vhostReady: notOk(Reason.SecretStoreNotReady, "o"),
        deliveryReady: notOk(Reason.BackupNotSynced, "b"),
      },
      1,
      T1,
    );
    expect(transitionEvents(base, outage)).toEqual([]);
    const failed = assembleStatus(
      base,
      { vhostReady: notOk(Reason.VhostFailed, "f"), deliveryReady: delivered },
      1,
      T1,
    );
    expect(transitionEvents(base, failed)).toEqual([
      { type: "Warning", reason: "VhostFailed", message: "f" },
    ]);
  });

  it("emits nothing when only a message changes", () => {
    const same = assembleStatus(
      base,
      { vhostReady: ok(Reason.VhostProvisioned, "other text"), deliveryReady: delivered },
      1,
      T1,
    );
    expect(transitionEvents(base, same)).toEqual([]);
  });

  it("emits Rotated on a switch, naming users only", () => {
    const one = { ...base, passwordGeneration: 1, username: "w-v1" };
    const two = { ...base, passwordGeneration: 2, username: "w-v2" };
    expect(transitionEvents(one, two)).toEqual([
      {
        type: "Normal",
        reason: "Rotated",
        message: 'rotated from generation 1 to 2: user "w-v2" is the delivered user',
      },
    ]);
  });

  it("says at a switch when the superseded user's login records were not read", () => {
    const recorded = { ...shape, loginRecords: true };
    const one = { ...base, passwordGeneration: 1, username: "w-v1" };
    const two = { ...base, passwordGeneration: 2, username: "w-v2", previousPasswordGeneration: 1 };
    const [unread] = core.transitionEvents(recorded, one, two);
    expect(unread?.message).toContain("keeps no login records by user (or they could not be read)");
    const [read] = core.transitionEvents(recorded, one, { ...two, previousPasswordLogins: 3 });
    expect(read?.message).toBe('rotated from generation 1 to 2: user "w-v2" is the delivered user');
  });
});
