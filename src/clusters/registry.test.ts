import { describe, expect, it } from "vitest";
import { FakeClock } from "../../harness/fakes/fake-clock.ts";
import { testKubeconfig } from "../../harness/fakes/kubeconfig.ts";
import { KubeRest } from "../runtime/port/kube-rest.ts";
import { createLogger } from "../runtime/base/logging.ts";
import { Registry } from "prom-client";
import { loadConfig, runtimeSettings } from "../runtime/process/config.ts";
import { Metrics } from "../runtime/loop/metrics.ts";
import { ClusterRegistry, registerClusterStates, registryFromSettings } from "./registry.ts";

const flush = () => new Promise((resolve) => setImmediate(resolve));
const b64 = (s: string) => Buffer.from(s).toString("base64");

function kubeconfig(server: string, user = "    token: t"): string {
  return `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "${server}"}}]
users:
- name: u
  user:
${user}
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`;
}

const secret = (name: string, server: string, namespaces?: string) => ({
  metadata: { name, namespace: "c5c3-clusters" },
  data: { kubeconfig: b64(kubeconfig(server)), ...(namespaces ? { namespaces: b64(namespaces) } : {}) },
});

/** The messages of the error (and its causes) a request fails with. */
async function failure(rest: KubeRest): Promise<string> {
  const messages: string[] = [];
  try {
    await rest.request("GET", "/version", { signal: AbortSignal.timeout(2000) });
  } catch (error) {
    for (let e: unknown = error; e instanceof Error; e = e.cause) messages.push(e.message);
  }
  return messages.join(" <- ");
}

/** A registry whose probe answers for servers in `up`, driven by hand instead of an informer. */
function setup(allowInsecure = false) {
  const clock = new FakeClock();
  const up = new Set<string>();
  const probes: string[] = [];
  const events: string[] = [];
  const registry = new ClusterRegistry({
    management: new KubeRest(testKubeconfig()),
    secretNamespace: "c5c3-clusters",
    clock,
    log: createLogger({ level: "fatal" }),
    resyncMs: 0,
    watchRestartMs: 60_000,
    allowInsecure,
    probe: async (rest) => {
      const server = rest.server();
      probes.push(`${clock.now()} ${server}`);
      if (!up.has(server)) throw new Error(`connect ECONNREFUSED ${server}`);
    },
  });
  registry.subscribe({
    engage: (c) => events.push(`engage ${c.name} ${c.namespaces?.join(",") ?? "*"}`),
    disengage: (name) => void events.push(`disengage ${name}`),
  });
  return { clock, up, probes, events, registry };
}

describe("ClusterRegistry", () => {
  it("engages a reachable cluster, re-engages it when its Secret changes, and ignores a resync", async () => {
    const { up, events, registry } = setup();
    up.add("https://a:6443");
    registry.secretChanged(secret("a", "https://a:6443"));
    await flush();
    registry.secretChanged(secret("a", "https://a:6443"));
    await flush();
    expect(events).toEqual(["engage a *"]);
    registry.secretChanged(secret("a", "https://a:6443", "t1,t2"));
    await flush();
    expect(events).toEqual(["engage a *", "disengage a", "engage a t1,t2"]);
    await registry.secretDeleted("a");
    expect(events.at(-1)).toBe("disengage a");
    expect(registry.statuses()).toEqual([]);
  });

  it("refuses a cluster that skips TLS verification, or engages it with a warning and a gauge when allowed", async () => {
    const insecure = (name: string) => ({
      metadata: { name, namespace: "c5c3-clusters" },
      data: {
        kubeconfig: b64(
          kubeconfig("https://a:6443").replace(
            'server: "https://a:6443"',
            'server: "https://a:6443", insecure-skip-tls-verify: true',
          ),
        ),
      },
    });
    const strict = setup();
    strict.up.add("https://a:6443");
    strict.registry.secretChanged(insecure("a"));
    await flush();
    expect(strict.events).toEqual([]);
    expect(strict.registry.statuses()).toMatchObject([{ name: "a", state: "refused" }]);

    const lenient = setup(true);
    lenient.up.add("https://a:6443");
    lenient.registry.secretChanged(insecure("a"));
    lenient.registry.secretChanged(secret("b", "https://a:6443"));
    await flush();
    expect(lenient.events).toEqual(["engage a *", "engage b *"]);
    const metrics = new Registry();
    registerClusterStates(metrics, lenient.registry);
    const gauge = await metrics.getSingleMetricAsString("vhost_broker_cluster_insecure");
    expect(gauge).toContain('vhost_broker_cluster_insecure{cluster="a"} 1');
    expect(gauge).not.toContain('cluster="b"');
    await lenient.registry.stop();
  });

  it("closes a target cluster's connections when it goes, never the management cluster's", async () => {
    const { up, registry } = setup();
    const engaged: KubeRest[] = [];
    registry.subscribe({ engage: (c) => void engaged.push(c.rest), disengage: () => undefined });
    up.add("https://a:6443");
    await registry.start().catch(() => undefined);
    registry.secretChanged(secret("a", "https://a:6443"));
    await flush();
    const [management, target] = engaged;
    expect(target?.server()).toBe("https://a:6443");
    await registry.stop();
    expect(await failure(target!)).toMatch(/destroyed/);
    // The management cluster's client is the program's: unreachable here, but not closed.
    expect(await failure(management!)).not.toMatch(/destroyed/);
  });

  it("retries an unreachable cluster with growing backoff while the others engage", async () => {
    const { clock, up, probes, events, registry } = setup();
    const start = clock.now();
    up.add("https://good:6443");
    registry.secretChanged(secret("down", "https://down:6443"));
    registry.secretChanged(secret("good", "https://good:6443"));
    await flush();
    expect(events).toEqual(["engage good *"]);
    expect(registry.statuses()).toContainEqual({
      name: "down",
      state: "unreachable",
      reason: "connect ECONNREFUSED https://down:6443",
    });
    for (let i = 0; i < 8000; i += 100) {
      clock.advance(100);
      await flush();
    }
    const attempts = probes
      .filter((p) => p.endsWith("down:6443"))
      .map((p) => Number(p.split(" ")[0]) - start);
    expect(attempts).toEqual([0, 1000, 3000, 7000]);
    up.add("https://down:6443");
    clock.advance(8000);
    await flush();
    expect(events).toEqual(["engage good *", "engage down *"]);
  });

  it("stops retrying a cluster whose Secret was deleted, and never reports it engaged", async () => {
    const { clock, probes, events, registry } = setup();
    registry.secretChanged(secret("gone", "https://gone:6443"));
    await flush();
    await registry.secretDeleted("gone");
    clock.advance(600_000);
    await flush();
    expect(probes).toHaveLength(1);
    expect(events).toEqual([]);
  });

  it("records a refused Secret without engaging it", async () => {
    const { events, registry } = setup();
    registry.secretChanged({
      metadata: { name: "exec" },
      data: { kubeconfig: b64(kubeconfig("https://x:6443", "    exec: {command: /bin/sh, apiVersion: v1}")) },
    });
    await flush();
    expect(events).toEqual([]);
    expect(registry.statuses()).toEqual([
      { name: "exec", state: "refused", reason: 'user "u" uses exec credentials, which are not allowed' },
    ]);
  });
});

describe("registryFromSettings with secret-namespaces", () => {
  const started = async (args: string[]) => {
    const requests: string[] = [];
    const management = {
      request: async (method: string, path: string) => {
        requests.push(`${method} ${path}`);
        return { metadata: { resourceVersion: "1" }, items: [] };
      },
      watch: async (path: string, _q: unknown, _e: unknown, done: () => void) => {
        requests.push(`WATCH ${path}`);
        const controller = new AbortController();
        controller.signal.addEventListener("abort", () => done());
        return controller;
      },
    } as unknown as KubeRest;
    const clock = new FakeClock();
    const registry = registryFromSettings({
      config: loadConfig(runtimeSettings, args, {}),
      log: createLogger({ level: "fatal" }),
      metrics: new Metrics({ processMetrics: false, clock }),
      clock,
      management,
      podName: "vhost-broker-0",
    });
    const engaged: string[] = [];
    registry.subscribe({ engage: (c) => void engaged.push(c.name), disengage: () => undefined });
    await registry.start();
    await flush();
    await registry.stop();
    return { requests, engaged };
  };

  it("reads no kubeconfig Secret when cluster-secret-namespace is outside them", async () => {
    const { requests, engaged } = await started(["--secret-namespaces=openstack"]);
    expect(engaged).toEqual([""]);
    expect(requests).toEqual([]);
  });

  it("reads them when it is among them, or when Secrets are not limited", async () => {
    for (const args of [["--secret-namespaces=openstack,c5c3-clusters"], []]) {
      const { requests } = await started(args);
      expect(requests[0]).toMatch(/^GET \/api\/v1\/namespaces\/c5c3-clusters\/secrets/);
    }
  });
});
