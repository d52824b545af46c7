import { describe, expect, it } from "vitest";
import { FakeClock } from "../../../harness/fakes/fake-clock.ts";
import type { ClusterSource } from "../port/cluster.ts";
import { loadConfig, runtimeSettings } from "./config.ts";
import { KubeApiError, type KubeObject, type KubeRest } from "../port/kube-rest.ts";
import { LeaderElector } from "../leadership/leader-election.ts";
import { FencedWriteError } from "../base/write-fence.ts";
import { createLogger } from "../base/logging.ts";
import { Manager } from "./manager.ts";
import { Metrics } from "../loop/metrics.ts";

// The manager's graceful shutdown against an in-memory API server: the leader keeps renewing while its
// passes drain, releases the Lease only after their last write, and a standby takes over only then.

const flush = async () => {
  for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
};
const configMaps = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true };
const LEASE = "/apis/coordination.k8s.io/v1/namespaces/ns/leases";

/** One Lease with resourceVersion checks, one ConfigMap to reconcile; every write is logged in order. */
function apiServer() {
  let lease: KubeObject | undefined;
  let version = 0;
  const log: string[] = [];
  const holder = () => (lease?.spec as { holderIdentity?: string } | undefined)?.holderIdentity;
  const rest = {
    request: async (method: string, path: string, options: { body?: KubeObject } = {}) => {
      if (path.startsWith(LEASE)) {
        if (method === "GET") {
          if (!lease) throw new KubeApiError(method, path, 404, "NotFound", "");
          return structuredClone(lease);
        }
        const body = options.body!;
        if (method === "PUT" && body.metadata?.resourceVersion !== lease?.metadata?.resourceVersion)
          throw new KubeApiError(method, path, 409, "Conflict", "");
        lease = { ...body, metadata: { ...body.metadata, resourceVersion: String(++version) } };
        const who = holder();
        log.push(who ? `lease ${who}` : "lease released");
        return structuredClone(lease);
      }
      if (method === "GET")
        return {
          metadata: { resourceVersion: "1" },
          items: [{ metadata: { namespace: "ns", name: "cm", resourceVersion: "1" } }],
        };
      log.push(`${method} ${path}`);
      return { metadata: { namespace: "ns", name: "cm" } };
    },
    // A watch that sees nothing until it is aborted, which ends it, as the real one.
    watch: async (_p: string, _q: unknown, _e: unknown, done: () => void) => {
      const controller = new AbortController();
      controller.signal.addEventListener("abort", () => done());
      return controller;
    },
  } as unknown as KubeRest;
  return { rest, log, holder };
}

function managementOnly(rest: KubeRest): ClusterSource {
  let subscriber: Parameters<ClusterSource["subscribe"]>[0] | undefined;
  return {
    subscribe: (s) => void (subscriber = s),
    start: async () => subscriber?.engage({ name: "", rest, namespaces: undefined }),
    stop: async () => undefined,
  };
}

describe("Manager shutdown", () => {
  it("keeps renewing while a pass drains, releases after its last write, and only then a standby leads", async () => {
    const clock = new FakeClock();
    const api = apiServer();
    const log = createLogger({ level: "fatal" });
    const config = loadConfig(
      runtimeSettings,
      ["--leader-election-namespace=ns", "--leader-election-id=l"],
      {},
    );
    let finish: () => void = () => undefined;
    const passStarted: string[] = [];
    const manager = new Manager({
      config,
      log,
      metrics: new Metrics({ processMetrics: false, clock }),
      clock,
      clusters: managementOnly(api.rest),
      management: api.rest,
      identity: "a",
    });
    manager.add({
      name: "slow",
      watches: [{ kind: configMaps, clusters: "management" }],
      // A pass on a slow backend: it writes once the backend answered, long after the SIGTERM.
      reconcile: async (request, { signal }) => {
        passStarted.push(request.name);
        await new Promise<void>((resolve) => (finish = resolve));
        await manager.kube("", signal)!.apply(configMaps, { metadata: { namespace: "ns", name: "cm" } });
        return {};
      },
    });
    const outcome = manager.run();
    for (let i = 0; i < 20 && passStarted.length === 0; i++) {
      clock.advance(100);
      await flush();
    }
    expect(api.holder()).toBe("a");
    expect(passStarted).toEqual(["cm"]);

    const standby = new LeaderElector({
      rest: api.rest,
      namespace: "ns",
      name: "l",
      identity: "b",
      leaseDurationMs: config["lease-duration"],
      renewDeadlineMs: config["renew-deadline"],
      retryPeriodMs: config["retry-period"],
      clock,
      log,
    });
    const standbyStop = new AbortController();
    let standbyLeads = false;
    void standby.acquire(standbyStop.signal).then((v) => (standbyLeads = v));

    let stopped = false;
    void manager.shutdown().then(() => (stopped = true));
    // Three lease durations of drain: renewals go on, nothing is released, the standby waits.
    const renewalsBefore = api.log.filter((l) => l === "lease a").length;
    for (let t = 0; t < 45_000; t += 500) {
      clock.advance(500);
      await flush();
    }
    expect(stopped).toBe(false);
    expect(standbyLeads).toBe(false);
    expect(api.log.filter((l) => l === "lease a").length).toBeGreaterThan(renewalsBefore + 15);
    expect(api.log).not.toContain("lease released");

    finish();
    for (let i = 0; i < 50 && !standbyLeads; i++) {
      clock.advance(500);
      await flush();
    }
    expect(stopped).toBe(true);
    expect(await outcome).toBe("stopped");
    expect(standbyLeads).toBe(true);
    const write = api.log.indexOf("PATCH /api/v1/namespaces/ns/configmaps/cm");
    const released = api.log.indexOf("lease released");
    expect(write).toBeGreaterThanOrEqual(0);
    expect(released).toBeGreaterThan(write);
    expect(api.log.indexOf("lease b")).toBeGreaterThan(released);
    // After the release nothing of the old leader goes out.
    expect(() => manager.fence.check("a late write")).toThrow(FencedWriteError);
    standbyStop.abort();
  });

  it("abandons a pass that outlives the reconcile timeout, releases, and fences its late write", async () => {
    const clock = new FakeClock();
    const api = apiServer();
    const log = createLogger({ level: "fatal" });
    const config = loadConfig(
      runtimeSettings,
      ["--leader-election-namespace=ns", "--leader-election-id=l", "--reconcile-timeout=20s"],
      {},
    );
    let finish: () => void = () => undefined;
    let late: unknown;
    const manager = new Manager({
      config,
      log,
      metrics: new Metrics({ processMetrics: false, clock }),
      clock,
      clusters: managementOnly(api.rest),
      management: api.rest,
      identity: "a",
    });
    manager.add({
      name: "stuck",
      watches: [{ kind: configMaps, clusters: "management" }],
      // Ignores its signal.
      reconcile: async () => {
        const kube = manager.kube("")!;
        await new Promise<void>((resolve) => (finish = resolve));
        late = await kube
          .apply(configMaps, { metadata: { namespace: "ns", name: "cm" } })
          .catch((error: unknown) => error);
        return {};
      },
    });
    void manager.run();
    for (let i = 0; i < 20; i++) {
      clock.advance(100);
      await flush();
    }
    let stopped = false;
    void manager.shutdown().then(() => (stopped = true));
    for (let t = 0; t < 30_000 && !stopped; t += 500) {
      clock.advance(500);
      await flush();
    }
    expect(stopped).toBe(true);
    expect(api.log).toContain("lease released");
    finish();
    await flush();
    expect(late).toBeInstanceOf(FencedWriteError);
    expect(api.log).not.toContain("PATCH /api/v1/namespaces/ns/configmaps/cm");
  });

  it("thawed past its Lease, the leader's pending write never goes out and the manager ends as lost", async () => {
    const clock = new FakeClock();
    const api = apiServer();
    const log = createLogger({ level: "fatal" });
    const config = loadConfig(
      runtimeSettings,
      ["--leader-election-namespace=ns", "--leader-election-id=l"],
      {},
    );
    let finish: () => void = () => undefined;
    let refused: unknown;
    const manager = new Manager({
      config,
      log,
      metrics: new Metrics({ processMetrics: false, clock }),
      clock,
      clusters: managementOnly(api.rest),
      management: api.rest,
      identity: "a",
    });
    manager.add({
      name: "paused",
      watches: [{ kind: configMaps, clusters: "management" }],
      reconcile: async (_request, { signal }) => {
        const kube = manager.kube("", signal)!;
        await new Promise<void>((resolve) => (finish = resolve));
        refused = await kube
          .apply(configMaps, { metadata: { namespace: "ns", name: "cm" } })
          .catch((error: unknown) => error);
        return {};
      },
    });
    let outcome: string | undefined;
    void manager.run().then((o) => (outcome = o));
    for (let i = 0; i < 20; i++) {
      clock.advance(100);
      await flush();
    }
    const renewals = api.log.length;
    // SIGSTOP for 20 s: time passes, nothing runs; at the thaw the backend's answer is there first.
    clock.advance(20_000);
    finish();
    await flush();
    expect(refused).toBeInstanceOf(FencedWriteError);
    expect(outcome).toBe("lost");
    expect(api.log.slice(renewals)).toEqual([]);
  });
});
