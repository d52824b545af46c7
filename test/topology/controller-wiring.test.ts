// The manager's wiring of the topology reconcilers: each reconcile reads and writes through the
// management cluster's port bound to its own signal, and logs through its own logger; the watch maps
// find the objects an event concerns through the cache's indexes.
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import {
  bindingKind,
  exchangeKind,
  permissionKind,
  queueKind,
  userKind,
  vhostKind,
} from "../../src/api/index.ts";
import type { Kind, KubeObject } from "../../src/runtime/port/kube-rest.ts";
import type { Manager } from "../../src/runtime/process/manager.ts";
import type { CacheIndex } from "../../src/runtime/port/object-index.ts";
import { createSharedDeps, topologyControllers } from "../../src/topology/index.ts";
import { FakeKube } from "../../harness/fakes/fake-kube.ts";

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

    expect(
      await vhosts?.reconcile({ cluster: "", namespace: "app", name: "v" }, { log, signal, queuedAt: 0 }),
    ).toEqual({});
    expect(asked).toEqual([["", signal]]);
    expect(kube.count("get")).toBeGreaterThan(0);
    expect(lines).toEqual([expect.stringContaining('"reconcileID":"r-1"')]);
    expect(lines[0]).toContain("not served by the built-in topology controller");
  });
});

describe("the topology controllers' watch maps", () => {
  const object = (kind: Kind, namespace: string, name: string, spec: Record<string, unknown>) => ({
    apiVersion: `${kind.group}/${kind.version}`,
    kind: kind.kind,
    metadata: { namespace, name },
    spec,
  });
  const ready = <T extends KubeObject>(o: T) => ({
    ...o,
    status: { conditions: [{ type: "Ready", status: "True" }] },
  });
  const ref = { rabbitmqClusterReference: { name: "bus" } };
  const cached = [
    object(bindingKind, "app", "to-q", {
      vhost: "v",
      source: "x",
      destination: "q",
      destinationType: "queue",
      ...ref,
    }),
    object(bindingKind, "app", "x-to-y", { vhost: "v", source: "x", destination: "y", ...ref }),
    object(bindingKind, "other", "to-q", {
      vhost: "v",
      source: "x",
      destination: "q",
      destinationType: "queue",
      ...ref,
    }),
    object(permissionKind, "app", "p", { vhost: "v", userReference: { name: "u" }, permissions: {}, ...ref }),
    object(permissionKind, "app", "p-other-user", {
      vhost: "v",
      userReference: { name: "w" },
      permissions: {},
      ...ref,
    }),
  ];
  // A cache of the objects above, read through the index each map names.
  const manager = {
    cachedByIndex: (_cluster: string, kind: Kind, index: CacheIndex, namespace: string, value: string) =>
      cached.filter(
        (o) => o.kind === kind.kind && o.metadata.namespace === namespace && index.values(o).includes(value),
      ),
  } as unknown as Manager;
  const deps = createSharedDeps({
    ownership: { enabled: true, clusters: { serve: "all" }, connectionSecrets: false },
  });
  const controllers = topologyControllers(manager, deps);
  const mapOf = (controller: string, watched: Kind) => {
    const watch = controllers
      .find((c) => c.name === controller)
      ?.watches.find((w) => w.kind.kind === watched.kind);
    return (o: KubeObject) => watch?.map?.(o, "") ?? [];
  };
  const names = (requests: { namespace: string; name: string }[]) =>
    requests.map((r) => `${r.namespace}/${r.name}`);

  it("wake the Bindings of a Queue or Exchange once it has a Ready condition", () => {
    const byQueue = mapOf("topology-bindings", queueKind);
    const byExchange = mapOf("topology-bindings", exchangeKind);
    expect(byQueue(object(queueKind, "app", "q-cr", { name: "q", vhost: "v" }))).toEqual([]);
    expect(names(byQueue(ready(object(queueKind, "app", "q-cr", { name: "q", vhost: "v" }))))).toEqual([
      "app/to-q",
    ]);
    expect(names(byExchange(ready(object(exchangeKind, "app", "x-cr", { name: "x", vhost: "v" }))))).toEqual([
      "app/to-q",
      "app/x-to-y",
    ]);
    expect(names(byExchange(ready(object(exchangeKind, "app", "y-cr", { name: "y", vhost: "v" }))))).toEqual([
      "app/x-to-y",
    ]);
  });

  it("wake the Permissions of a User", () => {
    const byUser = mapOf("topology-permissions", { ...userKind, namespaced: true });
    expect(names(byUser(object(userKind, "app", "u", {})))).toEqual(["app/p"]);
    expect(byUser(object(userKind, "other", "u", {}))).toEqual([]);
  });
});
