import { Registry, type Gauge } from "prom-client";
import { describe, expect, it } from "vitest";
import { rabbitMQVhostKind, sqlUserKind } from "../api/index.ts";
import type { Kind, KubeObject } from "../runtime/port/kube-rest.ts";
import type { Manager } from "../runtime/process/manager.ts";
import { DomainMetrics } from "./domain-metrics.ts";

const order = (name: string, ready: string): KubeObject => ({
  metadata: { namespace: "tenant", name },
  status: { conditions: [{ type: "Ready", status: ready }], nextRotation: "2026-12-02T06:00:00Z" },
});

function world(orders: KubeObject[]) {
  const manager = {
    engagedClusters: () => [""],
    cachedList: (_cluster: string, kind: Kind) => (kind === rabbitMQVhostKind ? orders : []),
  } as unknown as Manager;
  const registry = new Registry();
  new DomainMetrics(registry, manager, { orders: [rabbitMQVhostKind], topology: [] });
  return registry;
}

/** The series a gauge holds between scrapes (prom-client keeps them in `hashMap`). */
const held = (registry: Registry, name: string) =>
  Object.keys((registry.getSingleMetric(name) as Gauge & { hashMap: object }).hashMap).length;

describe("the per-object gauges", () => {
  it("render each cached order's series at a scrape and keep none of them after it", async () => {
    const orders = [order("a", "True"), order("b", "False")];
    const registry = world(orders);
    const text = await registry.metrics();
    expect(text).toContain(
      'vhost_broker_order_ready_status{kind="RabbitMQVhost",cluster="",namespace="tenant",name="a",condition="True"} 1',
    );
    expect(text).toContain(
      'vhost_broker_order_ready_status{kind="RabbitMQVhost",cluster="",namespace="tenant",name="b",condition="True"} 0',
    );
    expect(text).toContain(
      'vhost_broker_order_next_rotation_timestamp_seconds{kind="RabbitMQVhost",cluster="",namespace="tenant",name="b"} 1796191200',
    );
    expect(held(registry, "vhost_broker_order_ready_status")).toBe(0);
    expect(held(registry, "vhost_broker_order_next_rotation_timestamp_seconds")).toBe(0);

    orders.pop();
    const next = await registry.metrics();
    expect(next).toContain('name="a"');
    expect(next).not.toContain('name="b"');
  });

  it("count the orders on each backend, apart while they migrate", async () => {
    const on = (name: string, backend: string | undefined, phase?: string): KubeObject => ({
      metadata: { namespace: "tenant", name },
      status: { backend, ...(phase ? { migration: { from: "old", to: "new", phase } } : {}) },
    });
    const registry = world([
      on("a", "old"),
      on("b", "old", "Provisioning"),
      on("c", "new", "Draining"),
      on("d", "new", "Draining"),
      on("e", undefined),
    ]);
    const text = await registry.metrics();
    const series = text.split("\n").filter((l) => l.startsWith("vhost_broker_orders_per_backend{"));
    expect(series.sort()).toEqual([
      'vhost_broker_orders_per_backend{kind="RabbitMQVhost",backend="new",migration="Draining"} 2',
      'vhost_broker_orders_per_backend{kind="RabbitMQVhost",backend="old",migration="None"} 1',
      'vhost_broker_orders_per_backend{kind="RabbitMQVhost",backend="old",migration="Provisioning"} 1',
    ]);
  });

  it("render the Ready of each SQL object the built-in controller serves, and of no other", async () => {
    const user = (name: string): KubeObject => ({
      metadata: { namespace: "openstack", name },
      status: { conditions: [{ type: "Ready", status: "False" }] },
    });
    const manager = {
      engagedClusters: () => [""],
      cachedList: (_cluster: string, kind: Kind) =>
        kind === sqlUserKind ? [user("nova"), user("theirs")] : [],
    } as unknown as Manager;
    const registry = new Registry();
    new DomainMetrics(registry, manager, {
      orders: [],
      topology: [],
      sql: { kinds: [sqlUserKind], serves: (_kind, object) => object.metadata?.name === "nova" },
    });
    const text = await registry.metrics();
    expect(text).toContain(
      'vhost_broker_sql_ready_status{kind="User",namespace="openstack",name="nova",condition="False"} 1',
    );
    expect(text).not.toContain('name="theirs"');
  });

  it("leave out the Ready gauges when told to, and keep the rotation's", async () => {
    const manager = {
      engagedClusters: () => [""],
      cachedList: (_cluster: string, kind: Kind) =>
        kind === rabbitMQVhostKind ? [order("a", "True")] : kind === sqlUserKind ? [order("u", "True")] : [],
    } as unknown as Manager;
    const kinds = {
      orders: [rabbitMQVhostKind],
      topology: [],
      sql: { kinds: [sqlUserKind], serves: () => true },
    };
    const names = async (registry: Registry) =>
      (await registry.getMetricsAsJSON()).map((m) => m.name).filter((n) => n.endsWith("_ready_status"));
    const kept = new Registry();
    new DomainMetrics(kept, manager, kinds);
    expect(await names(kept)).toEqual([
      "vhost_broker_order_ready_status",
      "vhost_broker_topology_ready_status",
      "vhost_broker_sql_ready_status",
    ]);
    const dropped = new Registry();
    new DomainMetrics(dropped, manager, kinds, { readyStatus: false });
    expect(await names(dropped)).toEqual([]);
    expect(await dropped.metrics()).toContain(
      'vhost_broker_order_next_rotation_timestamp_seconds{kind="RabbitMQVhost",cluster="",namespace="tenant",name="a"}',
    );
  });
});
