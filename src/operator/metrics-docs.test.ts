import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { ClusterRegistry, registerClusterStates } from "../clusters/registry.ts";
import { realClock } from "../runtime/base/clock.ts";
import { loadConfig, runtimeSettings } from "../runtime/process/config.ts";
import { createLogger } from "../runtime/base/logging.ts";
import { Manager } from "../runtime/process/manager.ts";
import { Metrics } from "../runtime/loop/metrics.ts";
import type { KubeRest } from "../runtime/port/kube-rest.ts";
import { topologyControllerKinds } from "../topology/index.ts";
import { GatekeeperMetrics } from "../gatekeeper/metrics.ts";
import { DomainMetrics } from "./domain-metrics.ts";
import { orderKindRefs } from "./order-kinds.ts";

it("documents every metric the process exports in docs/metrics.md", async () => {
  const page = readFileSync(new URL("../../docs/metrics.md", import.meta.url), "utf8");
  const metrics = new Metrics();
  const log = createLogger({ level: "fatal" });
  const management = {} as KubeRest;
  const clusters = new ClusterRegistry({
    management,
    secretNamespace: "c5c3-clusters",
    clock: realClock,
    log,
    resyncMs: 0,
    watchRestartMs: 60_000,
  });
  registerClusterStates(metrics.registry, clusters);
  const manager = new Manager({
    config: loadConfig(runtimeSettings, [], {}),
    log,
    metrics,
    clock: realClock,
    clusters,
    management,
    identity: "docs",
  });
  new GatekeeperMetrics(metrics.registry);
  new DomainMetrics(metrics.registry, manager, {
    orders: orderKindRefs,
    topology: topologyControllerKinds.map((k) => k.kind),
  });
  const names = (await metrics.registry.getMetricsAsJSON()).map((m) => m.name);
  expect(names.length).toBeGreaterThan(40);
  for (const name of names) expect(page, name).toContain(`\`${name}\``);
});
