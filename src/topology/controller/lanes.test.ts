import { describe, expect, it } from "vitest";
import { slowEndpointEvent } from "../../external/index.ts";
import { brokerWords, topologyLane } from "./lanes.ts";

const object = (ref: unknown, namespace = "cp") => ({
  metadata: { name: "v", namespace },
  spec: { rabbitmqClusterReference: ref },
});

describe("topologyLane", () => {
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
      brokerWords,
    );
    expect(event).toEqual({
      type: "Warning",
      reason: "BrokerSlow",
      action: "Waiting",
      note: "RabbitmqCluster bus/hung is slow: 4 passes of its Vhosts have waited 5 s for it; this Vhost waits its turn in that broker's lane (2 waiting), while objects of other brokers go on",
    });
  });
});
