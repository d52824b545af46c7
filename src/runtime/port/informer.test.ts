import { describe, expect, it } from "vitest";
import { FakeClock } from "../../../harness/fakes/fake-clock.ts";
import { Informer } from "./informer.ts";
import { cacheable } from "./object-store.ts";
import { boundSecret, isPartial, secretCacheBytes } from "./secret-bound.ts";
import { KubeApiError, type KubeList, type KubeObject, type KubeRest } from "./kube-rest.ts";
import { createLogger } from "../base/logging.ts";
import type { CacheIndex } from "./object-index.ts";
import { matchesSelector } from "../base/selector.ts";

const flush = () => new Promise((resolve) => setImmediate(resolve));
const cm = (name: string, rv: string): KubeObject => ({
  metadata: { namespace: "ns", name, resourceVersion: rv },
});

type WatchScript = (onEvent: (type: string, o: KubeObject) => void, done: (e?: unknown) => void) => void;

/** A scripted API server: each list and each watch takes the next step of its script. */
function fakeRest(lists: (KubeList | Error)[], watches: WatchScript[]) {
  const calls: string[] = [];
  const rest = {
    request: async (_m: string, path: string) => {
      calls.push(`list ${path}`);
      const next = lists.shift();
      if (!next) return new Promise(() => {});
      if (next instanceof Error) throw next;
      return next;
    },
    watch: async (
      _p: string,
      query: Record<string, unknown>,
      onEvent: (t: string, o: KubeObject) => void,
      done: (e?: unknown) => void,
      inactivityTimeoutMs: number,
    ) => {
      calls.push(`watch rv=${String(query.resourceVersion)} silence=${inactivityTimeoutMs}`);
      const script = watches.shift();
      if (script) script(onEvent, done);
      // Like the real watch: aborting it ends it.
      const controller = new AbortController();
      controller.signal.addEventListener("abort", () => done());
      return controller;
    },
  } as unknown as KubeRest;
  return { rest, calls };
}

function informerFor(rest: KubeRest, clock: FakeClock, resyncMs = 0) {
  const events: string[] = [];
  const informer = new Informer({
    rest,
    kind: { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true },
    namespace: "ns",
    clock,
    log: createLogger({ level: "fatal" }),
    resyncMs,
    watchRestartMs: 300_000,
  });
  informer.addHandler({
    add: (o) => events.push(`add ${o.metadata?.name}`),
    update: (_p, o) => events.push(`update ${o.metadata?.name}`),
    delete: (o) => events.push(`delete ${o.metadata?.name}`),
    resync: (o) => events.push(`resync ${o.metadata?.name}`),
  });
  return { informer, events };
}

describe("Informer", () => {
  it("lists again after 410 Gone and reports what vanished and what changed meanwhile", async () => {
    const clock = new FakeClock();
    const { rest, calls } = fakeRest(
      [
        { metadata: { resourceVersion: "10" }, items: [cm("a", "1"), cm("b", "2")] },
        { metadata: { resourceVersion: "20" }, items: [cm("b", "15"), cm("c", "16")] },
      ],
      [
        (onEvent, done) => {
          onEvent("ERROR", { code: 410, message: "too old" } as KubeObject);
          done();
        },
      ],
    );
    const { informer, events } = informerFor(rest, clock);
    informer.start();
    await flush();
    await flush();
    expect(informer.synced()).toBe(true);
    expect(events).toEqual(["add a", "add b", "update b", "add c", "delete a"]);
    expect(calls).toEqual([
      "list /api/v1/namespaces/ns/configmaps",
      "watch rv=10 silence=90000",
      "list /api/v1/namespaces/ns/configmaps",
      "watch rv=20 silence=90000",
    ]);
    expect(
      informer
        .list()
        .map((o) => o.metadata?.name)
        .sort(),
    ).toEqual(["b", "c"]);
    await informer.stop();
  });

  it("keeps listed and watched objects without their managedFields", async () => {
    const clock = new FakeClock();
    const managed = (name: string, rv: string): KubeObject => ({
      metadata: {
        ...cm(name, rv).metadata,
        labels: { app: name },
        managedFields: [{ manager: "kubectl", operation: "Apply", fieldsType: "FieldsV1", fieldsV1: {} }],
      },
      data: { key: name },
    });
    const { rest } = fakeRest(
      [{ metadata: { resourceVersion: "10" }, items: [managed("a", "1")] }],
      [(onEvent) => onEvent("ADDED", managed("b", "11"))],
    );
    const { informer } = informerFor(rest, clock);
    informer.start();
    await flush();
    await flush();
    for (const name of ["a", "b"]) {
      expect(informer.get(`ns/${name}`)).toEqual({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: {
          namespace: "ns",
          name,
          resourceVersion: name === "a" ? "1" : "11",
          labels: { app: name },
        },
        data: { key: name },
      });
    }
    await informer.stop();
  });

  it("restarts after a failure with growing backoff, and resumes the watch from the last version seen", async () => {
    const clock = new FakeClock();
    const { rest, calls } = fakeRest(
      [
        new KubeApiError("GET", "/x", 500, "InternalError", ""),
        new Error("connect ECONNREFUSED"),
        { metadata: { resourceVersion: "5" }, items: [] },
      ],
      [
        (onEvent, done) => {
          onEvent("ADDED", cm("x", "6"));
          onEvent("BOOKMARK", { metadata: { resourceVersion: "9" } });
          done(new Error("socket hang up"));
        },
      ],
    );
    const { informer, events } = informerFor(rest, clock);
    informer.start();
    await flush();
    expect(calls).toHaveLength(1);
    expect(informer.synced()).toBe(false);
    clock.advance(799);
    await flush();
    expect(calls).toHaveLength(1);
    clock.advance(1);
    await flush();
    expect(calls).toHaveLength(2);
    clock.advance(1600);
    await flush();
    await flush();
    expect(informer.synced()).toBe(true);
    expect(events).toEqual(["add x"]);
    clock.advance(800);
    await flush();
    expect(calls.at(-1)).toBe("watch rv=9 silence=90000");
    await informer.stop();
  });

  it("takes a watch silent for 90 s for dead and watches again from its version, without a list", async () => {
    // A partition that drops a connection without a FIN leaves a watch that never ends by itself;
    // the API server sends a bookmark about once a minute on a quiet watch that asked for them.
    const clock = new FakeClock();
    const { rest, calls } = fakeRest(
      [{ metadata: { resourceVersion: "5" }, items: [cm("a", "4")] }],
      [
        (onEvent, done) => {
          onEvent("BOOKMARK", { metadata: { resourceVersion: "7" } });
          done(new DOMException("no watch event for 90000 ms", "TimeoutError"));
        },
      ],
    );
    const { informer, events } = informerFor(rest, clock);
    informer.start();
    await flush();
    await flush();
    expect(calls).toEqual([
      "list /api/v1/namespaces/ns/configmaps",
      "watch rv=5 silence=90000",
      "watch rv=7 silence=90000",
    ]);
    expect(events).toEqual(["add a"]);
    await informer.stop();
  });

  it("hands every cached object to the handlers once per resync period", async () => {
    const clock = new FakeClock();
    const { rest } = fakeRest([{ metadata: { resourceVersion: "1" }, items: [cm("a", "1")] }], [() => {}]);
    const { informer, events } = informerFor(rest, clock, 60_000);
    informer.start();
    await flush();
    clock.advance(60_000);
    await flush();
    clock.advance(60_000);
    await flush();
    expect(events).toEqual(["add a", "resync a", "resync a"]);
    await informer.stop();
  });
});

/** A cluster-wide informer whose watch events and relists the test sends one at a time. */
function drivenInformer() {
  const lists: KubeList[] = [];
  let send: (type: string, o: KubeObject) => void = () => {};
  const watch: WatchScript = (onEvent) => (send = onEvent);
  const { rest } = fakeRest(
    lists,
    Array.from({ length: 100 }, () => watch),
  );
  const informer = new Informer({
    rest,
    kind: { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true },
    clock: new FakeClock(),
    log: createLogger({ level: "fatal" }),
    resyncMs: 0,
    watchRestartMs: 300_000,
  });
  const start = async (items: KubeObject[]) => {
    lists.push({ metadata: { resourceVersion: "1" }, items });
    informer.start();
    await flush();
  };
  /** Expires the watch: the informer lists again and gets `items`. */
  const relist = async (items: KubeObject[]) => {
    lists.push({ metadata: { resourceVersion: "1" }, items });
    send("ERROR", { code: 410 } as KubeObject);
    for (let i = 0; i < 4; i++) await flush();
  };
  return { informer, start, relist, send: (type: string, o: KubeObject) => send(type, o) };
}

const labelled = (namespace: string, name: string, labels: Record<string, string>, rv = "1"): KubeObject => ({
  metadata: { namespace, name, labels, resourceVersion: rv },
});

const names = (objects: KubeObject[]) =>
  objects.map((o) => `${o.metadata?.namespace}/${o.metadata?.name}`).sort();

describe("an informer of a kind the API server does not serve", () => {
  it("says so without syncing, keeps listing with backoff, and syncs once the kind is served", async () => {
    const clock = new FakeClock();
    const notServed = () =>
      new KubeApiError("GET", "/api/v1/namespaces/ns/configmaps", 404, "", "404 page not found");
    const { rest } = fakeRest(
      [notServed(), notServed(), { metadata: { resourceVersion: "5" }, items: [cm("a", "5")] }],
      [],
    );
    const { informer, events } = informerFor(rest, clock);
    informer.start();
    await flush();
    expect(informer.synced()).toBe(false);
    expect(informer.kindNotServed()).toBe(true);
    for (let i = 0; i < 40 && !informer.synced(); i++) {
      clock.advance(1_000);
      await flush();
    }
    expect(informer.synced()).toBe(true);
    expect(informer.kindNotServed()).toBe(false);
    expect(events).toEqual(["add a"]);
    await informer.stop();
  });

  it("is not 'not served' for a missing object's 404 or any other failure", async () => {
    const clock = new FakeClock();
    const { rest } = fakeRest(
      [new KubeApiError("GET", "/x", 404, "NotFound", 'namespaces "ns" not found')],
      [],
    );
    const { informer } = informerFor(rest, clock);
    informer.start();
    await flush();
    expect(informer.kindNotServed()).toBe(false);
    await informer.stop();
  });
});

describe("the informer's indexes", () => {
  const byTeam: CacheIndex = {
    name: "team",
    values: (o) => [(o["spec"] as { team?: string } | undefined)?.team ?? ""].filter((t) => t !== ""),
  };
  const withTeam = (o: KubeObject, team: string, rv: string): KubeObject => ({
    ...o,
    metadata: { ...o.metadata, resourceVersion: rv },
    spec: { team },
  });

  it("follow adds, updates that change a label or a field, deletes and relists", async () => {
    const { informer, start, relist, send } = drivenInformer();
    const a = labelled("ns", "a", { app: "x" });
    const b = labelled("ns", "b", { app: "x", tier: "web" });
    const c = labelled("other", "c", { app: "x" });
    await start([withTeam(a, "red", "1"), b, c]);
    expect(names(informer.select("ns", "app=x"))).toEqual(["ns/a", "ns/b"]);
    expect(names(informer.select("ns", "app=x,tier!=web"))).toEqual(["ns/a"]);
    expect(names(informer.select("other", ""))).toEqual(["other/c"]);
    expect(names(informer.byIndex(byTeam, "ns", "red"))).toEqual(["ns/a"]);

    send("ADDED", labelled("ns", "d", { app: "y" }, "2"));
    send("MODIFIED", labelled("ns", "b", { app: "y", tier: "web" }, "3"));
    send("MODIFIED", withTeam(a, "blue", "4"));
    expect(names(informer.select("ns", "app=x"))).toEqual(["ns/a"]);
    expect(names(informer.select("ns", "app=y"))).toEqual(["ns/b", "ns/d"]);
    expect(
      informer.select("ns", "app=y").find((o) => o.metadata?.name === "b")?.metadata?.resourceVersion,
    ).toBe("3");
    expect(informer.byIndex(byTeam, "ns", "red")).toEqual([]);
    expect(names(informer.byIndex(byTeam, "ns", "blue"))).toEqual(["ns/a"]);

    send("DELETED", labelled("ns", "d", { app: "y" }, "5"));
    expect(names(informer.select("ns", "app=y"))).toEqual(["ns/b"]);

    // The relist drops a and c, changes b's label and brings e.
    await relist([
      labelled("ns", "b", { app: "x" }, "6"),
      withTeam(labelled("ns", "e", { app: "y" }), "blue", "7"),
    ]);
    expect(names(informer.select("ns", "app=x"))).toEqual(["ns/b"]);
    expect(names(informer.select("ns", "app=y"))).toEqual(["ns/e"]);
    expect(names(informer.select("ns", ""))).toEqual(["ns/b", "ns/e"]);
    expect(informer.select("other", "")).toEqual([]);
    expect(names(informer.byIndex(byTeam, "ns", "blue"))).toEqual(["ns/e"]);
    await informer.stop();
  });

  it("refuse a second definition under a name in use", async () => {
    const { informer, start } = drivenInformer();
    await start([]);
    informer.byIndex(byTeam, "ns", "red");
    expect(() => informer.byIndex({ ...byTeam }, "ns", "red")).toThrow("cache index team is defined twice");
    await informer.stop();
  });

  it("select what a filter of the whole cache selects, through random events and relists", async () => {
    // A small deterministic generator (mulberry32), so that a failure replays.
    let seed = 15;
    const random = () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
    const namespaces = ["ns1", "ns2", ""];
    let version = 1;
    const randomObject = (): KubeObject => {
      const labels: Record<string, string> = {};
      for (const key of ["app", "tier", "team"]) if (random() < 0.6) labels[key] = pick(["x", "y", ""]);
      return {
        metadata: { namespace: pick(namespaces), name: pick(["a", "b", "c", "d", "e", "f"]), labels },
        spec: { team: pick(["red", "blue", ""]) },
      } as KubeObject;
    };
    const stamped = (o: KubeObject) => ({
      ...o,
      metadata: { ...o.metadata, resourceVersion: String(++version) },
    });
    const selectors = [
      "",
      "app=x",
      "app==y,tier=x",
      "app=x,tier!=y",
      "tier=",
      "app,!tier",
      "app!=x",
      "!app",
      "app=x,app=y",
      "app=y,app",
      "team=x,tier=y,app=",
    ];
    const byValue = (o: KubeObject) => byTeam.values(o);
    const { informer, start, relist, send } = drivenInformer();
    await start(Array.from({ length: 10 }, () => stamped(randomObject())));
    for (let step = 0; step < 300; step++) {
      const roll = random();
      if (roll < 0.55) send(pick(["ADDED", "MODIFIED"]), stamped(randomObject()));
      else if (roll < 0.85) send("DELETED", stamped(randomObject()));
      else if (roll < 0.9)
        await relist(Array.from({ length: Math.floor(random() * 12) }, () => stamped(randomObject())));
      // Some indexes are first asked for late, and built from a cache that has changed meanwhile.
      const asked = step < 150 ? selectors.slice(0, 6) : selectors;
      for (const namespace of namespaces) {
        const inNamespace = informer.list().filter((o) => (o.metadata?.namespace ?? "") === namespace);
        for (const selector of asked) {
          const filtered = inNamespace.filter((o) => matchesSelector(selector, o.metadata?.labels));
          expect(names(informer.select(namespace, selector)), `${step}: ${namespace} ${selector}`).toEqual(
            names(filtered),
          );
        }
        for (const team of ["red", "blue"]) {
          expect(names(informer.byIndex(byTeam, namespace, team))).toEqual(
            names(inNamespace.filter((o) => byValue(o).includes(team))),
          );
        }
      }
    }
    await informer.stop();
  });
});

describe("cacheable", () => {
  it("keeps the object deeply frozen, without managedFields, with its kind", () => {
    const kind = { group: "c5c3.io", version: "v1alpha1", plural: "things", kind: "Thing", namespaced: true };
    const cached = cacheable(
      { metadata: { name: "a", managedFields: [{ manager: "m" }], labels: { x: "1" } }, spec: { list: [1] } },
      kind,
    );
    expect(cached).toEqual({
      apiVersion: "c5c3.io/v1alpha1",
      kind: "Thing",
      metadata: { name: "a", labels: { x: "1" } },
      spec: { list: [1] },
    });
    expect(() => ((cached.metadata as { labels: Record<string, string> }).labels["x"] = "2")).toThrow(
      TypeError,
    );
    expect(() => (cached["spec"] as { list: number[] }).list.push(2)).toThrow(TypeError);
  });

  it("freezes what the cache's transform keeps, as the transform marked it", () => {
    const kind = { group: "", version: "v1", plural: "secrets", kind: "Secret", namespaced: true };
    const big = { metadata: { name: "a" }, data: { padding: "x".repeat(secretCacheBytes) } };
    const cached = cacheable(big, kind, boundSecret);
    expect(cached).toEqual({ apiVersion: "v1", kind: "Secret", metadata: { name: "a" } });
    expect(isPartial(cached)).toBe(true);
    expect(Object.isFrozen(cached.metadata)).toBe(true);
  });
});
