import { describe, expect, it } from "vitest";
import { labelKeys } from "./naming.ts";
import { RABBITMQ_NAMING } from "../rabbitmq/naming.ts";
import { orderOfLabelledBy, ordersOfControlPlane } from "./watches.ts";

const labels = (l: Record<string, string>) => ({ metadata: { labels: l } });
const orderOfLabelled = orderOfLabelledBy(labelKeys(RABBITMQ_NAMING));

describe("orderOfLabelled", () => {
  it("maps a child on the management cluster to the order its labels name, on the order's cluster", () => {
    const child = labels({
      "c5c3.io/rabbitmqvhost-name": "workflow",
      "c5c3.io/rabbitmqvhost-namespace": "tenant-b",
      "c5c3.io/rabbitmqvhost-cluster": "edge-1",
    });
    expect(orderOfLabelled(child, "")).toEqual([
      { cluster: "edge-1", namespace: "tenant-b", name: "workflow" },
    ]);
  });

  it("reads an empty cluster label as the management cluster", () => {
    const child = labels({
      "c5c3.io/rabbitmqvhost-name": "workflow",
      "c5c3.io/rabbitmqvhost-namespace": "tenant-a",
      "c5c3.io/rabbitmqvhost-cluster": "",
    });
    expect(orderOfLabelled(child, "")).toEqual([{ cluster: "", namespace: "tenant-a", name: "workflow" }]);
  });

  it("maps a delivered Secret (no cluster label) to the order beside it on the watching cluster", () => {
    const delivered = labels({
      "c5c3.io/rabbitmqvhost-name": "workflow",
      "c5c3.io/rabbitmqvhost-namespace": "tenant-b",
    });
    expect(orderOfLabelled(delivered, "edge-1")).toEqual([
      { cluster: "edge-1", namespace: "tenant-b", name: "workflow" },
    ]);
  });

  it("ignores an object without both labels", () => {
    expect(orderOfLabelled(labels({ "c5c3.io/rabbitmqvhost-name": "x" }), "")).toEqual([]);
    expect(orderOfLabelled({}, "")).toEqual([]);
  });
});

describe("ordersOfControlPlane", () => {
  const order = (namespace: string, name: string, ref: { name: string; namespace?: string }) => ({
    metadata: { namespace, name },
    spec: { controlPlaneRef: ref },
  });
  const cp = { metadata: { namespace: "openstack", name: "cp" } };

  it("finds the orders that reference the ControlPlane, an absent ref namespace meaning the order's own", () => {
    const orders = [
      order("tenant-a", "one", { name: "cp", namespace: "openstack" }),
      order("openstack", "two", { name: "cp" }),
      order("tenant-a", "other-cp", { name: "cp2", namespace: "openstack" }),
      order("tenant-a", "own-ns", { name: "cp" }),
    ];
    expect(ordersOfControlPlane([["", orders]], cp)).toEqual([
      { cluster: "", namespace: "tenant-a", name: "one" },
      { cluster: "", namespace: "openstack", name: "two" },
    ]);
  });

  it("finds them on target clusters too, each request naming its cluster", () => {
    const byCluster: [string, ReturnType<typeof order>[]][] = [
      ["", [order("tenant-a", "here", { name: "cp", namespace: "openstack" })]],
      ["target-b", [order("tenant-b", "there", { name: "cp", namespace: "openstack" })]],
      ["target-c", [order("tenant-c", "elsewhere", { name: "cp", namespace: "other" })]],
    ];
    expect(ordersOfControlPlane(byCluster, cp)).toEqual([
      { cluster: "", namespace: "tenant-a", name: "here" },
      { cluster: "target-b", namespace: "tenant-b", name: "there" },
    ]);
  });
});
