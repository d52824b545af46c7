import { Registry } from "prom-client";
import { expect, it } from "vitest";
import { MemoryStore } from "../../harness/fakes/memory-store.ts";
import type { Manager } from "../runtime/process/manager.ts";
import { DomainMetrics } from "./domain-metrics.ts";
import { instrumentedStore } from "./instrumented-store.ts";

it("counts backup writes, failed calls and unusable health checks, and times every call", async () => {
  const registry = new Registry();
  const metrics = new DomainMetrics(registry, {} as Manager, { orders: [], topology: [] });
  const memory = new MemoryStore();
  const store = instrumentedStore(memory, metrics);
  await store.write("a/b", { k: "v" });
  await store.read("a/b");
  memory.healthState = { ready: false, state: "unreachable", message: "down" };
  await store.health();
  memory.read = () => Promise.reject(new Error("boom"));
  await expect(store.read("a/b")).rejects.toThrow("boom");
  memory.describe = () => Promise.reject(new Error("refused"));
  await expect(store.describe("a/b", { name: "o" })).rejects.toThrow("refused");
  const value = async (name: string, labels: Record<string, string> = {}) =>
    (await registry.getSingleMetric(name.replace(/_count$/, ""))?.get())?.values.find(
      (v: { metricName?: string; labels: Record<string, unknown> }) =>
        (v.metricName ?? name) === name && Object.entries(labels).every(([k, l]) => v.labels[k] === l),
    )?.value;
  expect(await value("vhost_broker_backup_writes_total")).toBe(1);
  expect(await value("vhost_broker_backup_failures_total", { operation: "health" })).toBe(1);
  expect(await value("vhost_broker_backup_failures_total", { operation: "read" })).toBe(1);
  expect(await value("vhost_broker_backup_failures_total", { operation: "describe" })).toBe(1);
  expect(
    await value("vhost_broker_backend_request_duration_seconds_count", {
      backend: "openbao",
      operation: "read",
    }),
  ).toBe(2);
});
