import { describe, expect, it } from "vitest";
import { FakeClock } from "../../test/support/fake-clock.ts";
import { Informer } from "./informer.ts";
import { KubeApiError, type KubeList, type KubeObject, type KubeRest } from "./kube-rest.ts";
import { createLogger } from "./logging.ts";

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
    ) => {
      calls.push(`watch rv=${String(query.resourceVersion)}`);
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
      "watch rv=10",
      "list /api/v1/namespaces/ns/configmaps",
      "watch rv=20",
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
    expect(calls.at(-1)).toBe("watch rv=9");
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
