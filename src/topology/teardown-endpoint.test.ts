import { describe, expect, it } from "vitest";
import type { BrokerResolution } from "../rabbitmq/resolve-broker.ts";
import { everDeclared, teardownResolution } from "./teardown-endpoint.ts";

describe("everDeclared", () => {
  it("is false for an object no pass brought to the broker", () => {
    expect(everDeclared(undefined)).toBe(false);
    expect(everDeclared({})).toBe(false);
    const refused = { type: "Ready", status: "False", reason: "FailedCreateOrUpdate", message: "…label…" };
    expect(everDeclared({ conditions: [refused] })).toBe(false);
  });

  it("is true once a pass succeeded: observedGeneration stays after a later failure, Ready True alone counts", () => {
    const failed = { type: "Ready", status: "False", reason: "FailedCreateOrUpdate" };
    expect(everDeclared({ observedGeneration: 1, conditions: [failed] })).toBe(true);
    expect(everDeclared({ conditions: [{ type: "Ready", status: "True" }] })).toBe(true);
    expect(everDeclared({ conditions: [{ type: "PasswordSynced", status: "True" }] })).toBe(false);
  });
});

describe("teardownResolution", () => {
  const ready: BrokerResolution = {
    outcome: "ready",
    connection: { url: "http://broker:15672", username: "u", password: "p" },
    key: "u@http://broker:15672",
  };
  const refused: BrokerResolution = {
    outcome: "refused",
    reason: "connection Secret app/conn must carry the label",
  };
  const waiting: BrokerResolution = { outcome: "waiting", reason: "connection Secret app/conn not found" };
  const gone: BrokerResolution = { outcome: "gone", reason: "RabbitmqCluster app/rmq not found" };

  it("lets an object never declared go without the broker when the reference cannot be used", () => {
    for (const unusable of [refused, waiting]) {
      expect(teardownResolution(unusable, false)).toEqual({
        outcome: "gone",
        reason: `${unusable.reason}; no pass ever declared it on the broker`,
      });
    }
  });

  it("keeps what a declared object waits for, and a usable or gone broker as it is", () => {
    expect(teardownResolution(refused, true)).toBe(refused);
    expect(teardownResolution(waiting, true)).toBe(waiting);
    // A broker that answers is asked, declared or not: a 404 is done.
    expect(teardownResolution(ready, false)).toBe(ready);
    expect(teardownResolution(gone, false)).toBe(gone);
  });
});
