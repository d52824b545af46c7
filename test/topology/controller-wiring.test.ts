// The manager's wiring of the topology reconcilers: each reconcile reads and writes through the
// management cluster's port bound to its own signal, and logs through its own logger.
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { vhostKind } from "../../src/api/index.ts";
import { topologyControllers } from "../../src/operator/topology-controller.ts";
import type { Manager } from "../../src/runtime/manager.ts";
import { createSharedDeps } from "../../src/topology/controller/index.ts";
import { FakeKube } from "../support/fake-kube.ts";

describe("topologyControllers", () => {
  it("reconciles through manager.kube('', signal) and the reconcile's logger", async () => {
    const kube = new FakeKube();
    kube.put(vhostKind, {
      metadata: { name: "v", namespace: "app" },
      spec: { name: "v", rabbitmqClusterReference: { name: "elsewhere" } },
    });
    const asked: [string, AbortSignal | undefined][] = [];
    const manager = {
      kube: (cluster: string, signal?: AbortSignal) => (asked.push([cluster, signal]), kube),
      cachedList: () => [],
    } as unknown as Manager;
    const deps = createSharedDeps({
      ownership: { enabled: true, clusters: { serve: "none" }, connectionSecrets: false },
    });
    const vhosts = topologyControllers(manager, deps).find((c) => c.name === "topology-vhosts");
    const lines: string[] = [];
    const log = pino({ base: undefined }, { write: (line: string) => void lines.push(line) }).child({
      reconcileID: "r-1",
    });
    const signal = new AbortController().signal;

    expect(await vhosts?.reconcile({ cluster: "", namespace: "app", name: "v" }, { log, signal })).toEqual(
      {},
    );
    expect(asked).toEqual([["", signal]]);
    expect(kube.count("get")).toBeGreaterThan(0);
    expect(lines).toEqual([expect.stringContaining('"reconcileID":"r-1"')]);
    expect(lines[0]).toContain("not served by the built-in topology controller");
  });
});
