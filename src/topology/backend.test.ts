import { describe, expect, it } from "vitest";
import { queueKind } from "../api/index.ts";
import { changedBeyondFinalizer, slowEndpointEvent } from "../external/index.ts";
import { nextStatus, type StatusWithConditions } from "../runtime/base/conditions.ts";
import { topology, topologyControllerKinds, topologyKind, topologyLane } from "./backend.ts";
import { topologyFinalizer } from "../rabbitmq/finalizer.ts";
import { notReady, ready } from "./upstream.ts";

const kindNamed = (name: string) => {
  const found = topologyControllerKinds.find((k) => k.kind.kind === name);
  if (!found) throw new Error(`no kind ${name}`);
  return found;
};

const topologyObject = (kind: string, spec: Record<string, unknown>) => ({
  apiVersion: "rabbitmq.com/v1beta1",
  kind,
  metadata: { name: "x", namespace: "app" },
  spec,
});

describe("secretsOf: the Secrets whose change re-reconciles an object", () => {
  it("names a User's imported credentials beside it and a connection Secret in the reference's namespace", () => {
    const user = topologyObject("User", {
      importCredentialsSecret: { name: "creds" },
      rabbitmqClusterReference: { namespace: "shared", connectionSecret: { name: "conn" } },
    });
    expect(kindNamed("User").secretsOf(user)).toEqual([
      { namespace: "app", name: "creds" },
      { namespace: "shared", name: "conn" },
    ]);
  });

  it("reads a connection Secret beside the object when the reference has no namespace", () => {
    const vhost = topologyObject("Vhost", {
      name: "v",
      rabbitmqClusterReference: { connectionSecret: { name: "conn" } },
    });
    expect(kindNamed("Vhost").secretsOf(vhost)).toEqual([{ namespace: "app", name: "conn" }]);
  });

  it("names none for a reference to a RabbitmqCluster, or for an object that does not parse", () => {
    const vhost = topologyObject("Vhost", {
      name: "v",
      rabbitmqClusterReference: { name: "rmq", namespace: "cp" },
    });
    expect(kindNamed("Vhost").secretsOf(vhost)).toEqual([]);
    expect(kindNamed("Vhost").secretsOf({ spec: "not an object" })).toEqual([]);
  });
});

const object = (ref: unknown, namespace = "cp") => ({
  metadata: { name: "v", namespace },
  spec: { rabbitmqClusterReference: ref },
});

describe("the lane of a topology object", () => {
  it("is the RabbitmqCluster the reference names, in the object's namespace unless it names another", () => {
    expect(topologyLane(object({ name: "rabbitmq" }))).toBe("RabbitmqCluster cp/rabbitmq");
    expect(topologyLane(object({ name: "rabbitmq", namespace: "bus" }))).toBe("RabbitmqCluster bus/rabbitmq");
  });

  it("is the connection Secret where the reference names one, as the resolver prefers it", () => {
    expect(topologyLane(object({ name: "ignored", connectionSecret: { name: "conn" } }))).toBe(
      "connection Secret cp/conn",
    );
  });

  it("is the common lane for an object not cached or naming no broker", () => {
    expect(topologyLane(undefined)).toBe("");
    expect(topologyLane(object({}))).toBe("");
    expect(topologyLane({ metadata: { name: "v" } })).toBe("");
  });
});

describe("the slow broker's Event", () => {
  it("names the broker, how long it held its passes, and that other brokers go on", () => {
    const event = slowEndpointEvent(
      "Vhost",
      { lane: "RabbitmqCluster bus/hung", running: 4, waiting: ["a", "b"], slowForMs: 5_200 },
      topology.lane.words,
    );
    expect(event).toEqual({
      type: "Warning",
      reason: "BrokerSlow",
      action: "Waiting",
      note: "RabbitmqCluster bus/hung is slow: 4 passes of its Vhosts have waited 5 s for it; this Vhost waits its turn in that broker's lane (2 waiting), while objects of other brokers go on",
    });
  });
});

describe("an update of a topology object's own", () => {
  it("is the kind's upstream finalizer", () => {
    expect(topologyKind.queue.finalizer).toBe(topologyFinalizer(queueKind));
  });
  const ours = topologyFinalizer(queueKind);
  const passes = changedBeyondFinalizer(topologyKind.queue.finalizer);
  const queue = (finalizers: string[], generation = 1, status: unknown = {}) => ({
    metadata: { name: "q", generation, finalizers, resourceVersion: String(generation) },
    spec: { name: "q" },
    status,
  });

  it("drops our own claim and others' finalizer changes while ours stays on", () => {
    expect(passes(queue([]), queue([ours]))).toBe(false);
    expect(passes(queue([ours]), queue([ours, "other"]))).toBe(false);
  });

  it("passes a finalizer change that took ours off, a spec change and a deletion", () => {
    expect(passes(queue([ours]), queue([]))).toBe(true);
    expect(passes(queue([ours]), queue([ours], 2))).toBe(true);
    const deleting = queue([ours]);
    deleting.metadata = { ...deleting.metadata, deletionTimestamp: "2026-01-01T00:00:00Z" } as never;
    expect(passes(queue([ours]), deleting)).toBe(true);
  });

  it("drops a status write", () => {
    expect(passes(queue([ours]), queue([ours], 1, { conditions: [] }))).toBe(false);
  });
});

describe("status", () => {
  const t0 = Date.parse("2026-01-01T00:00:00Z");
  const t1 = Date.parse("2026-01-01T00:05:00Z");
  const { observedOnSuccess: _, ...rules } = topology.status;
  const next = (
    current: StatusWithConditions | undefined,
    conditions = [ready()],
    generation?: number,
    fields = {},
  ) => nextStatus(current, { conditions, ...fields }, generation, t1, rules).status;

  it("keeps lastTransitionTime while type and status stay, and moves it on a change", () => {
    const first = nextStatus(undefined, { conditions: [ready()] }, undefined, t0, rules).status;
    const { message: _none, ...readyWithout } = ready();
    expect(first.conditions).toEqual([{ ...readyWithout, lastTransitionTime: "2026-01-01T00:00:00Z" }]);
    expect(next(first).conditions).toEqual(first.conditions);
    const failed = next(first, [notReady("boom")]);
    expect(failed.conditions?.[0]).toMatchObject({
      status: "False",
      message: "boom",
      lastTransitionTime: "2026-01-01T00:05:00Z",
    });
    // A new message with the same status keeps the time.
    expect(
      nextStatus(failed, { conditions: [notReady("again")] }, undefined, t0, rules).status.conditions?.[0]
        ?.lastTransitionTime,
    ).toBe("2026-01-01T00:05:00Z");
  });

  it("sets observedGeneration only on success, and a repeat pass differs in nothing", () => {
    const failed = next({ observedGeneration: 1 }, [notReady("x")]);
    expect(failed.observedGeneration).toBe(1);
    const ok = next(failed, [ready()], 2, { username: "u" });
    expect(ok).toMatchObject({ observedGeneration: 2, username: "u" });
    expect(ok.conditions?.[0]?.message).toBeUndefined();
    expect(nextStatus(ok, { conditions: [ready()], username: "u" }, 2, t0, rules).changed).toBe(false);
  });

  it("keeps someone else's conditions in their place", () => {
    const other = { type: "Synced", status: "True" as const, reason: "X", message: "m" };
    expect(next({ conditions: [other] }).conditions?.map((c) => c.type)).toEqual(["Synced", "Ready"]);
  });
});
