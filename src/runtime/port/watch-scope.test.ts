import { describe, expect, it } from "vitest";
import { FakeClock } from "../../../harness/fakes/fake-clock.ts";
import type { ClusterSource } from "./cluster.ts";
import { loadConfig, runtimeSettings } from "../process/config.ts";
import type { Kind, KubeObject, KubeRest } from "./kube-rest.ts";
import { RestKube } from "./rest-kube.ts";
import { createLogger } from "../base/logging.ts";
import { Manager } from "../process/manager.ts";
import { Metrics } from "../loop/metrics.ts";
import { limitOf, watchNamespaces } from "./watch-scope.ts";

const secrets: Kind = { group: "", version: "v1", plural: "secrets", kind: "Secret", namespaced: true };
const configMaps: Kind = {
  group: "",
  version: "v1",
  plural: "configmaps",
  kind: "ConfigMap",
  namespaced: true,
};
const namespaces: Kind = {
  group: "",
  version: "v1",
  plural: "namespaces",
  kind: "Namespace",
  namespaced: false,
};

describe("the secret-namespaces setting", () => {
  it("is every namespace by default, else the listed namespaces, each once", () => {
    expect(loadConfig(runtimeSettings, [], {})["secret-namespaces"]).toEqual([]);
    const config = loadConfig(runtimeSettings, ["--secret-namespaces=openstack, tenant-a,,openstack"], {});
    expect(config["secret-namespaces"]).toEqual(["openstack", "tenant-a"]);
    const env = loadConfig(runtimeSettings, [], { VHOST_BROKER_SECRET_NAMESPACES: "a,b" });
    expect(env["secret-namespaces"]).toEqual(["a", "b"]);
  });

  it("refuses what is not a namespace name, naming it", () => {
    expect(() => loadConfig(runtimeSettings, ["--secret-namespaces=ok,Not_A_Name"], {})).toThrow(
      /invalid setting secret-namespaces.*"Not_A_Name" is not a namespace name/,
    );
  });
});

describe("watch scoping", () => {
  const none = { cluster: undefined, secrets: [] };
  const listed = { cluster: undefined, secrets: ["a", "b"] };

  it("limits Secrets on the management cluster only, and nothing else", () => {
    expect(limitOf(secrets, "", none)).toBeUndefined();
    expect(limitOf(secrets, "", listed)).toEqual(["a", "b"]);
    expect(limitOf(configMaps, "", listed)).toBeUndefined();
    expect(limitOf(namespaces, "", listed)).toBeUndefined();
    // A target cluster's access is its own chart's (deploy/target-cluster-access).
    expect(limitOf(secrets, "target", listed)).toBeUndefined();
    expect(limitOf(secrets, "target", { cluster: ["x"], secrets: ["a"] })).toEqual(["x"]);
    expect(limitOf(secrets, "", { cluster: ["a", "c"], secrets: ["a", "b"] })).toEqual(["a"]);
  });

  it("turns a watch of every namespace into one per namespace of the limit", () => {
    expect(watchNamespaces(undefined, undefined)).toEqual([undefined]);
    expect(watchNamespaces("a", undefined)).toEqual(["a"]);
    expect(watchNamespaces(undefined, ["a", "b"])).toEqual(["a", "b"]);
    expect(watchNamespaces("b", ["a", "b"])).toEqual(["b"]);
    expect(watchNamespaces("c", ["a", "b"])).toEqual([]);
  });
});

const flush = async () => {
  for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
};

/** An API server with a labelled Secret in a, b and c; every request is logged. */
function apiServer() {
  const requests: string[] = [];
  const secret = (namespace: string): KubeObject => ({
    metadata: { namespace, name: "s", labels: { app: "x" }, resourceVersion: "1" },
  });
  const rest = {
    request: async (method: string, path: string) => {
      requests.push(`${method} ${path}`);
      const ns = /\/namespaces\/([^/]+)\/secrets/.exec(path)?.[1];
      const items = ns ? [secret(ns)] : ["a", "b", "c"].map(secret);
      return { metadata: { resourceVersion: "1" }, items };
    },
    watch: async (path: string, _q: unknown, _e: unknown, done: () => void) => {
      requests.push(`WATCH ${path}`);
      const controller = new AbortController();
      controller.signal.addEventListener("abort", () => done());
      return controller;
    },
  } as unknown as KubeRest;
  return { rest, requests };
}

async function engaged(args: string[]) {
  const clock = new FakeClock();
  const api = apiServer();
  let subscriber: Parameters<ClusterSource["subscribe"]>[0] | undefined;
  const clusters: ClusterSource = {
    subscribe: (s) => void (subscriber = s),
    start: async () => subscriber?.engage({ name: "", rest: api.rest, namespaces: undefined }),
    stop: async () => undefined,
  };
  const manager = new Manager({
    config: loadConfig(runtimeSettings, ["--leader-elect=false", ...args], {}),
    log: createLogger({ level: "fatal" }),
    metrics: new Metrics({ processMetrics: false, clock }),
    clock,
    clusters,
    management: api.rest,
    identity: "a",
  });
  manager.add({ name: "c", watches: [{ kind: secrets, labelSelector: "app" }], reconcile: async () => ({}) });
  void manager.run();
  for (let i = 0; i < 20 && !manager.synced(""); i++) await flush();
  return { manager, api };
}

describe("the manager with secret-namespaces", () => {
  it("watches Secrets in each listed namespace and never cluster-wide", async () => {
    const { manager, api } = await engaged(["--secret-namespaces=a,b"]);
    expect(manager.synced("")).toBe(true);
    const paths = api.requests.map((r) => r.split(" ")[1]);
    expect(paths).toContain("/api/v1/namespaces/a/secrets");
    expect(paths).toContain("/api/v1/namespaces/b/secrets");
    expect(paths).not.toContain("/api/v1/secrets");
    expect(paths.some((p) => p?.includes("/namespaces/c/"))).toBe(false);
    // A read of every namespace is answered by the namespaces' caches together.
    const before = api.requests.length;
    const all = await manager.kube("")!.list(secrets, "", "app");
    expect(all.map((s) => s.metadata?.namespace).sort()).toEqual(["a", "b"]);
    expect(api.requests.length).toBe(before);
    await manager.shutdown();
  });

  it("watches Secrets cluster-wide by default", async () => {
    const { manager, api } = await engaged([]);
    const paths = api.requests.map((r) => r.split(" ")[1]);
    expect(paths).toContain("/api/v1/secrets");
    expect(paths.some((p) => p?.includes("/namespaces/"))).toBe(false);
    await manager.shutdown();
  });
});

describe("the port under a limit", () => {
  it("reads every namespace it has no cache for one namespace at a time, never cluster-wide", async () => {
    const api = apiServer();
    const kube = new RestKube(api.rest, { cache: { caches: () => [], limitOf: () => ["a", "b"] } });
    const all = await kube.list(secrets, "", "app");
    expect(all.map((s) => s.metadata?.namespace)).toEqual(["a", "b"]);
    expect(api.requests).toEqual(["GET /api/v1/namespaces/a/secrets", "GET /api/v1/namespaces/b/secrets"]);
  });
});
