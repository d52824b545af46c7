import { describe, expect, it } from "vitest";
import { notOk, ok } from "./conditions.ts";
import type { ConditionState } from "./types.ts";
import { orderHealth, type HealthInput } from "./health.ts";

const provisioned = ok("VhostProvisioned", "vhost up");
const delivered = ok("Delivered", "delivered");
const allReady = ok("AllReady", "all ready");
const needsPerson = (reason: string) =>
  ["VhostFailed", "GatekeeperRejected", "DeliveryRefused"].includes(reason);

const input = (over: Partial<HealthInput> & { resource?: ConditionState; delivery?: ConditionState }) => {
  const { resource = provisioned, delivery = delivered, ...rest } = over;
  return {
    conditions: [
      { type: "VhostReady", state: resource },
      { type: "DeliveryReady", state: delivery },
    ],
    ready: allReady,
    needsPerson,
    declaredGeneration: undefined,
    deliveredGeneration: 1,
    ...rest,
  };
};
const read = (over: Parameters<typeof input>[0]) => {
  const { reconciling, stalled } = orderHealth(input(over));
  return [`${reconciling.status}/${reconciling.reason}`, `${stalled.status}/${stalled.reason}`];
};

describe("orderHealth", () => {
  it("reads a Ready order without a rotation asked for as neither", () => {
    expect(read({})).toEqual(["False/Reconciled", "False/NotStalled"]);
    expect(read({ declaredGeneration: 1 })).toEqual(["False/Reconciled", "False/NotStalled"]);
  });

  it("reads a rotation the spec asks for as Reconciling until the Secret carries it", () => {
    expect(read({ declaredGeneration: 3, deliveredGeneration: 2 })).toEqual([
      "True/RotationInProgress",
      "False/NotStalled",
    ]);
    const { reconciling } = orderHealth(input({ declaredGeneration: 3, deliveredGeneration: 2 }));
    expect(reconciling.message).toBe(
      "spec.passwordGeneration asks for generation 3; the delivered Secret carries generation 2",
    );
    // A scheduled rotation's generation above the spec's is no rotation asked for.
    expect(read({ declaredGeneration: 2, deliveredGeneration: 5 })).toEqual([
      "False/Reconciled",
      "False/NotStalled",
    ]);
  });

  it("reads a Ready False that waits or retries by itself as Reconciling with Ready's reason and message", () => {
    const ready = notOk("NotAllReady", "VhostReady is False (WaitingForUser)");
    const { reconciling, stalled } = orderHealth(
      input({ resource: notOk("WaitingForUser", "w"), ready, deliveredGeneration: undefined }),
    );
    expect(reconciling).toEqual({ status: "True", reason: "NotAllReady", message: ready.message });
    expect(stalled.status).toBe("False");
  });

  it("reads the first condition that needs a person as Stalled, and then not Reconciling", () => {
    const { reconciling, stalled } = orderHealth(
      input({
        resource: notOk("VhostFailed", "the broker refused the vhost"),
        delivery: notOk("DeliveryRefused", "foreign Secret"),
        ready: notOk("NotAllReady", "x"),
        declaredGeneration: 3,
      }),
    );
    expect(stalled).toEqual({
      status: "True",
      reason: "VhostFailed",
      message: "VhostReady is False (VhostFailed): the broker refused the vhost",
    });
    expect(reconciling.status).toBe("False");
    expect(reconciling.reason).toBe("Stalled");
  });
});
