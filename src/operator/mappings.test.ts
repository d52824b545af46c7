import { describe, expect, it } from "vitest";
import { labelKeys } from "../orders/core/naming.ts";
import { RABBITMQ_NAMING } from "../orders/rabbitmq/naming.ts";
import { orderOfLabelledBy, ordersOfControlPlane } from "./order-controller.ts";
import { bindingEndKey, bindingsByEnd } from "../topology/controller/index.ts";
import { bindingsOf, clusterSelection, readyChanged } from "./topology-controller.ts";

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

describe("clusterSelection", () => {
  it.each([
    ["all", { serve: "all" }],
    ["none", { serve: "none" }],
    ["names:rabbitmq,openstack/bus", { serve: "names", names: ["rabbitmq", "openstack/bus"] }],
    ["annotation:example.com/served-by", { serve: "annotated", annotation: "example.com/served-by" }],
    [
      "annotation:example.com/served-by=vhost-broker",
      { serve: "annotated", annotation: "example.com/served-by", value: "vhost-broker" },
    ],
  ])("reads %s", (text, expected) => {
    expect(clusterSelection(text)).toEqual(expected);
  });
});

describe("bindingsOf", () => {
  const object = (kind: string, namespace: string, name: string, spec: Record<string, unknown>) => ({
    kind,
    metadata: { namespace, name },
    spec,
  });
  const bindings = [
    object("Binding", "app", "to-q", { vhost: "v", source: "x", destination: "q", destinationType: "queue" }),
    object("Binding", "app", "to-x", {
      vhost: "v",
      source: "x",
      destination: "y",
      destinationType: "exchange",
    }),
    object("Binding", "app", "default-vhost", { source: "x", destination: "q", destinationType: "queue" }),
    object("Binding", "other", "elsewhere", {
      vhost: "v",
      source: "x",
      destination: "q",
      destinationType: "queue",
    }),
    object("Binding", "app", "exchange-named-q", {
      vhost: "v",
      source: "x",
      destination: "q",
      destinationType: "exchange",
    }),
  ];
  const names = (end: ReturnType<typeof object>) => bindingsOf(bindings, end).map((b) => b.metadata?.name);

  it("wakes the bindings whose destination is a queue, by its broker name and vhost in its namespace", () => {
    expect(names(object("Queue", "app", "queue-cr", { name: "q", vhost: "v" }))).toEqual(["to-q"]);
    expect(names(object("Queue", "app", "queue-cr", { name: "q" }))).toEqual(["default-vhost"]);
  });

  it("wakes the bindings whose source or destination is an exchange", () => {
    expect(names(object("Exchange", "app", "x-cr", { name: "x", vhost: "v" }))).toEqual([
      "to-q",
      "to-x",
      "exchange-named-q",
    ]);
    expect(names(object("Exchange", "app", "y-cr", { name: "y", vhost: "v" }))).toEqual(["to-x"]);
  });

  it("wakes nothing for an end without a broker name", () => {
    expect(names(object("Queue", "app", "queue-cr", { vhost: "v" }))).toEqual([]);
  });

  it("finds through the bindingsByEnd index every binding a scan finds", () => {
    const all = [
      ...bindings,
      object("Binding", "app", "x-to-itself", { vhost: "v", source: "x", destination: "x" }),
      object("Binding", "app", "no-type", { vhost: "v", source: "y", destination: "q" }),
    ];
    const ends = [
      object("Queue", "app", "q-cr", { name: "q", vhost: "v" }),
      object("Queue", "app", "q-default", { name: "q" }),
      object("Queue", "other", "q-other", { name: "q", vhost: "v" }),
      object("Queue", "app", "x-as-queue", { name: "x", vhost: "v" }),
      object("Exchange", "app", "x-cr", { name: "x", vhost: "v" }),
      object("Exchange", "app", "y-cr", { name: "y", vhost: "v" }),
      object("Exchange", "app", "q-as-exchange", { name: "q", vhost: "v" }),
      object("Exchange", "app", "x-default", { name: "x" }),
    ];
    let found = 0;
    for (const end of ends) {
      const key = bindingEndKey(end, end.kind === "Queue" ? "queue" : "exchange");
      const filed = all.filter(
        (b) => b.metadata.namespace === end.metadata.namespace && bindingsByEnd.values(b).includes(key ?? ""),
      );
      expect(bindingsOf(filed, end), end.metadata.name).toEqual(bindingsOf(all, end));
      found += bindingsOf(all, end).length;
    }
    expect(found).toBe(12);
  });
});

describe("readyChanged", () => {
  const at = (ready?: "True" | "False") => ({
    metadata: { generation: 1 },
    status: { conditions: ready ? [{ type: "Ready", status: ready }] : [] },
  });

  it("holds for the first Ready condition written, and a change of its status", () => {
    expect(readyChanged(at(), at("True"))).toBe(true);
    expect(readyChanged(at(), at("False"))).toBe(true);
    expect(readyChanged(at("False"), at("True"))).toBe(true);
    expect(readyChanged(at("True"), at("False"))).toBe(true);
  });

  it("does not hold for an update that leaves it as it was", () => {
    expect(readyChanged(at("True"), at("True"))).toBe(false);
    expect(readyChanged(at(), at())).toBe(false);
  });
});
