import { describe, expect, it } from "vitest";
import { brokerNameKey, endsByBrokerName } from "./binding-ends.ts";

describe("endsByBrokerName", () => {
  const end = (spec: Record<string, unknown>) => ({ metadata: { namespace: "app", name: "cr" }, spec });

  it("files a Queue or Exchange under its broker vhost and name, the default vhost for none", () => {
    expect(endsByBrokerName.values(end({ name: "q", vhost: "v" }))).toEqual([brokerNameKey("v", "q")]);
    expect(endsByBrokerName.values(end({ name: "q" }))).toEqual([brokerNameKey("/", "q")]);
    expect(brokerNameKey("v", "q")).not.toBe(brokerNameKey("/", "q"));
  });

  it("keeps names apart that a separator would join", () => {
    expect(brokerNameKey("a/b", "c")).not.toBe(brokerNameKey("a", "b/c"));
  });

  it("files nothing for an object without a broker name", () => {
    expect(endsByBrokerName.values(end({ vhost: "v" }))).toEqual([]);
  });
});
