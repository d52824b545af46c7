import { describe, expect, it } from "vitest";
import { testKubeconfig } from "../../../harness/fakes/kubeconfig.ts";
import { KubeApiError, KubeRest, type Kind, type KubeObject } from "./kube-rest.ts";
import { isNotServed, type CachedObjects, type KubeCache } from "./kube.ts";
import { RestKube, statusMergePatch } from "./rest-kube.ts";
import { matchesSelector } from "../base/selector.ts";
import { boundSecret, secretCacheBytes } from "./secret-bound.ts";

const secret: Kind = { group: "", version: "v1", plural: "secrets", kind: "Secret", namespaced: true };

/** A KubeRest that answers from a table and records every request. */
class RecordingRest extends KubeRest {
  readonly requests: string[] = [];
  private readonly answer: (method: string, path: string) => unknown;
  constructor(answer: (method: string, path: string) => unknown) {
    super(testKubeconfig());
    this.answer = answer;
  }
  override async request<T>(method: string, path: string): Promise<T> {
    this.requests.push(`${method} ${path}`);
    return this.answer(method, path) as T;
  }
}

const object = (name: string, labels: Record<string, string> = {}): KubeObject => ({
  metadata: { name, namespace: "ns", labels },
});

function cacheOf(selector: string, objects: KubeObject[]): KubeCache {
  const inNamespace = (namespace: string) => objects.filter((o) => o.metadata?.namespace === namespace);
  const cached: CachedObjects = {
    labelSelector: selector,
    get: (_ns, name) => objects.find((o) => o.metadata?.name === name),
    list: (ns, labelSelector) =>
      inNamespace(ns).filter((o) => matchesSelector(labelSelector, o.metadata?.labels)),
    byIndex: (index, ns, value) => inNamespace(ns).filter((o) => index.values(o).includes(value)),
  };
  return { caches: () => [cached] };
}

const notFound = () => {
  throw new KubeApiError("GET", "/x", 404, "NotFound", "not found");
};

describe("the port's reads", () => {
  it("answers a get from a cache that holds the object, without a request", async () => {
    const rest = new RecordingRest(notFound);
    const kube = new RestKube(rest, { cache: cacheOf("app", [object("a", { app: "x" })]) });
    expect((await kube.get(secret, { namespace: "ns", name: "a" }))?.metadata?.name).toBe("a");
    expect(rest.requests).toEqual([]);
  });

  it("answers a get with the freshest copy when two caches of the kind hold the object", async () => {
    // The topology controller's watch delivered the deletion; the order controller's labelled watch of
    // the same kind has not yet. The reconcile the first one triggered must see the deletion.
    const at = (resourceVersion: string, deleting = false): KubeObject => ({
      metadata: {
        name: "a",
        namespace: "ns",
        resourceVersion,
        labels: { app: "x" },
        ...(deleting ? { deletionTimestamp: new Date("2026-12-01T11:31:08Z") } : {}),
      },
    });
    const two = (first: KubeObject, second: KubeObject): KubeCache => ({
      caches: () => [
        { labelSelector: "app", get: () => first, list: () => [first], byIndex: () => [first] },
        { labelSelector: "", get: () => second, list: () => [second], byIndex: () => [second] },
      ],
    });
    const rest = new RecordingRest(notFound);
    for (const cache of [two(at("99"), at("100", true)), two(at("100", true), at("99"))]) {
      const kube = new RestKube(rest, { cache });
      const found = await kube.get(secret, { namespace: "ns", name: "a" });
      expect(found?.metadata?.resourceVersion).toBe("100");
      expect(found?.metadata?.deletionTimestamp).toBeDefined();
    }
    expect(rest.requests).toEqual([]);
  });

  it("reads live on a miss in a labelled cache, and reads a 404 as absent", async () => {
    const rest = new RecordingRest(notFound);
    const kube = new RestKube(rest, { cache: cacheOf("app", []) });
    expect(await kube.get(secret, { namespace: "ns", name: "b" })).toBeUndefined();
    expect(rest.requests).toEqual(["GET /api/v1/namespaces/ns/secrets/b"]);
  });

  it("trusts a miss in a cache without a selector", async () => {
    const rest = new RecordingRest(notFound);
    const kube = new RestKube(rest, { cache: cacheOf("", []) });
    expect(await kube.get(secret, { namespace: "ns", name: "b" })).toBeUndefined();
    expect(rest.requests).toEqual([]);
  });

  it("reads live when asked to, whatever the cache holds", async () => {
    const rest = new RecordingRest(() => object("a"));
    const kube = new RestKube(rest, { cache: cacheOf("", [object("a")]) });
    await kube.get(secret, { namespace: "ns", name: "a" }, { live: true });
    expect(rest.requests).toHaveLength(1);
  });

  it("lists from a cache whose selector covers the list's, filtered by the narrower selector", async () => {
    const rest = new RecordingRest(() => ({ items: [] }));
    const kube = new RestKube(rest, {
      cache: cacheOf("app", [object("a", { app: "x" }), object("b", { app: "y" })]),
    });
    expect((await kube.list(secret, "ns", "app=y")).map((o) => o.metadata?.name)).toEqual(["b"]);
    expect(rest.requests).toEqual([]);
    await kube.list(secret, "ns", "other=1");
    expect(rest.requests).toEqual(["GET /api/v1/namespaces/ns/secrets"]);
  });

  it("lists by an index from a cache of every object, and live, filtered, from anything less", async () => {
    const byApp = { name: "app", values: (o: KubeObject) => [o.metadata?.labels?.["app"] ?? ""] };
    const objects = [object("a", { app: "x" }), object("b", { app: "y" })];
    const rest = new RecordingRest(() => ({ items: objects }));
    const cached = new RestKube(rest, { cache: cacheOf("", objects) });
    expect((await cached.listByIndex(secret, "ns", byApp, "y")).map((o) => o.metadata?.name)).toEqual(["b"]);
    expect(rest.requests).toEqual([]);
    for (const kube of [new RestKube(rest, { cache: cacheOf("app", objects) }), new RestKube(rest)]) {
      expect((await kube.listByIndex(secret, "ns", byApp, "x")).map((o) => o.metadata?.name)).toEqual(["a"]);
    }
    expect(rest.requests).toEqual(["GET /api/v1/namespaces/ns/secrets", "GET /api/v1/namespaces/ns/secrets"]);
  });

  it("reads a Secret the cache keeps in part from the API server, in a get and in a list", async () => {
    const bulky = (name: string): KubeObject => ({
      ...object(name, { app: "x" }),
      data: { password: "cA==", padding: "x".repeat(secretCacheBytes) },
    });
    const live: Record<string, KubeObject> = { big: bulky("big") };
    const rest = new RecordingRest((_method, path) => live[path.split("/").at(-1) ?? ""] ?? notFound());
    const small = { ...object("small", { app: "x" }), data: { password: "cA==" } };
    const cached = [small, bulky("big"), bulky("gone")].map(boundSecret);
    const kube = new RestKube(rest, { cache: cacheOf("app", cached) });

    expect((await kube.get(secret, { namespace: "ns", name: "big" }))?.["data"]).toEqual(
      live["big"]?.["data"],
    );
    expect(await kube.get(secret, { namespace: "ns", name: "gone" })).toBeUndefined();
    const listed = await kube.list(secret, "ns", "app=x");
    expect(listed.map((o) => [o.metadata?.name, o["data"]])).toEqual([
      ["small", small.data],
      ["big", live["big"]?.["data"]],
    ]);
    expect(rest.requests).toEqual([
      "GET /api/v1/namespaces/ns/secrets/big",
      "GET /api/v1/namespaces/ns/secrets/gone",
      "GET /api/v1/namespaces/ns/secrets/big",
      "GET /api/v1/namespaces/ns/secrets/gone",
    ]);
  });

  it("tells a kind that is not served from a missing object", () => {
    expect(isNotServed(new KubeApiError("GET", "/x", 404, "Not Found", ""))).toBe(true);
    expect(isNotServed(new KubeApiError("GET", "/x", 404, "NotFound", 'secrets "a" not found'))).toBe(false);
  });
});

describe("the port's status write", () => {
  it("is skipped when nothing changed, condition order and undefined fields aside", async () => {
    const rest = new RecordingRest(() => ({}));
    const kube = new RestKube(rest);
    const status = { a: 1, conditions: [{ type: "B" }, { type: "A" }] };
    const written = await kube.patchStatus(
      secret,
      { ...object("a"), status },
      {
        a: 1,
        b: undefined,
        conditions: [{ type: "A" }, { type: "B" }],
      },
    );
    expect(written).toBe(false);
    expect(rest.requests).toEqual([]);
  });

  it("sets every field it has and removes the ones it dropped", () => {
    expect(statusMergePatch({ a: 1, gone: 2 }, { a: 3, b: undefined })).toEqual({ gone: null, a: 3 });
  });
});
