import { describe, expect, it } from "vitest";
import { ownerMetadata } from "./owner.ts";

const order = {
  namespace: "tenant-a",
  kind: "RabbitMQVhost",
  name: "workflow",
  uid: "0e0c-1",
  generation: 3,
};

describe("ownerMetadata", () => {
  it("names an order on the management cluster, its uid and its generation", () => {
    expect(ownerMetadata({ ...order, cluster: "" })).toEqual({
      "managed-by": "vhost-broker",
      cluster: "management",
      namespace: "tenant-a",
      kind: "RabbitMQVhost",
      name: "workflow",
      uid: "0e0c-1",
      generation: "3",
    });
  });

  it("names a target cluster apart from the word for the management cluster", () => {
    expect(ownerMetadata({ ...order, cluster: "management" })).toMatchObject({
      cluster: "target",
      "target-cluster": "management",
    });
  });

  it("has no empty value, which OpenBao refuses: an unknown uid is left out", () => {
    const metadata = ownerMetadata({ ...order, cluster: "", uid: undefined });
    expect(metadata).not.toHaveProperty("uid");
    expect(Object.values(metadata).every((v) => v !== "")).toBe(true);
  });
});
