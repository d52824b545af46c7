// What the Kubernetes port promises its reconcilers, as one suite that runs on both implementations:
// the in-memory port of the whole-pass tests (test/runtime/kube-port.test.ts) and the port on the real
// management cluster (test/runtime/kube-port.itest.ts). A whole-pass test is only as good as the fake
// under it; where the fake and the API server disagree, this suite fails on the fake.
import { describe, expect, it } from "vitest";
import { TransientError } from "../../src/runtime/base/errors.ts";
import { isConflict, isNotServed, type Kube } from "../../src/runtime/port/kube.ts";
import type { Kind, KubeObject } from "../../src/runtime/port/kube-rest.ts";

/** A namespaced kind with a status subresource, served by the port under test. */
export const widgets: Kind = {
  group: "port.vhost-broker.test",
  version: "v1",
  plural: "widgets",
  kind: "Widget",
  namespaced: true,
};

/** The same group's kind that nobody serves. */
export const unservedKind: Kind = { ...widgets, plural: "gizmos", kind: "Gizmo" };

export interface PortUnderTest {
  kube: Kube;
  /** A namespace of the port's own, empty. */
  namespace: string;
  /** The object as it is stored now (a live read, past any cache). */
  stored(name: string): Promise<KubeObject | undefined>;
}

/** A 409 as the port reports it: the API error itself, or a transient error that carries it. */
function conflicted(error: unknown): boolean {
  return isConflict(error) || (error instanceof TransientError && isConflict(error.cause));
}

async function failure(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error("the call succeeded where it should have failed");
}

export function describeKubePort(name: string, setup: () => PortUnderTest): void {
  describe(`the Kubernetes port (${name})`, () => {
    const widget = (
      ns: string,
      n: string,
      spec: Record<string, unknown>,
      labels?: Record<string, string>,
    ) => ({
      metadata: { name: n, namespace: ns, ...(labels ? { labels } : {}) },
      spec,
    });

    it("reads an absent object as undefined and a kind nobody serves as not served", async () => {
      const { kube, namespace } = setup();
      expect(await kube.get(widgets, { namespace, name: "absent" }, { live: true })).toBeUndefined();
      const error = await failure(() => kube.get(unservedKind, { namespace, name: "x" }, { live: true }));
      expect(isNotServed(error)).toBe(true);
    });

    it("creates once: a second create of the name is a conflict", async () => {
      const { kube, namespace } = setup();
      const created = await kube.create(widgets, widget(namespace, "made", { size: 1 }));
      expect(created.metadata?.uid).toBeTruthy();
      expect(created.metadata?.resourceVersion).toBeTruthy();
      expect(created.metadata?.generation).toBe(1);
      const error = await failure(() => kube.create(widgets, widget(namespace, "made", { size: 2 })));
      expect(isConflict(error)).toBe(true);
    });

    it("applies: a changed spec raises the generation, an apply that changes nothing writes nothing", async () => {
      const { kube, namespace, stored } = setup();
      const first = await kube.apply(widgets, widget(namespace, "applied", { size: 1 }));
      expect(first.metadata?.generation).toBe(1);
      const same = await kube.apply(widgets, widget(namespace, "applied", { size: 1 }));
      expect(same.metadata?.resourceVersion).toBe(first.metadata?.resourceVersion);
      const changed = await kube.apply(widgets, widget(namespace, "applied", { size: 2 }));
      expect(changed.metadata?.generation).toBe(2);
      expect((await stored("applied"))?.["spec"]).toEqual({ size: 2 });
    });

    it("applies as one field manager: a label it applied before and leaves out is gone, another's stays", async () => {
      const { kube, namespace, stored } = setup();
      await kube.create(widgets, widget(namespace, "labelled", { size: 1 }, { theirs: "kept" }));
      await kube.apply(widgets, widget(namespace, "labelled", { size: 1 }, { ours: "a", gone: "b" }));
      await kube.apply(widgets, widget(namespace, "labelled", { size: 1 }, { ours: "c" }));
      expect((await stored("labelled"))?.metadata?.labels).toEqual({ theirs: "kept", ours: "c" });
    });

    it("lists by namespace and label selector", async () => {
      const { kube, namespace } = setup();
      await kube.apply(widgets, widget(namespace, "red", { size: 1 }, { colour: "red" }));
      await kube.apply(widgets, widget(namespace, "blue", { size: 1 }, { colour: "blue" }));
      const names = (objects: KubeObject[]) => objects.map((o) => o.metadata?.name).sort();
      expect(names(await kube.list(widgets, namespace, "colour=red"))).toEqual(["red"]);
      expect(names(await kube.list(widgets, namespace, "colour"))).toEqual(["blue", "red"]);
      expect(names(await kube.list(widgets, namespace, "colour!=red"))).toEqual(["blue"]);
      expect(await kube.list(widgets, namespace, "!colour")).toEqual([]);
    });

    it("writes a status only when it differs, and a status from a stale read conflicts", async () => {
      const { kube, namespace, stored } = setup();
      const object = await kube.apply(widgets, widget(namespace, "statused", { size: 1 }));
      expect(await kube.patchStatus(widgets, object, { phase: "Ready", note: "x" })).toBe(true);
      const written = (await stored("statused"))!;
      expect(written.status).toEqual({ phase: "Ready", note: "x" });
      expect(written.metadata?.generation).toBe(1);
      expect(await kube.patchStatus(widgets, written, { note: "x", phase: "Ready" })).toBe(false);
      expect((await stored("statused"))?.metadata?.resourceVersion).toBe(written.metadata?.resourceVersion);
      // A field the new status leaves out is removed.
      expect(await kube.patchStatus(widgets, written, { phase: "Ready" })).toBe(true);
      expect((await stored("statused"))?.status).toEqual({ phase: "Ready" });
      const error = await failure(() => kube.patchStatus(widgets, written, { phase: "Stale" }));
      expect(conflicted(error)).toBe(true);
      expect((await stored("statused"))?.status).toEqual({ phase: "Ready" });
    });

    it("holds a deletion on a finalizer, and lets the object go when the last one is removed", async () => {
      const { kube, namespace, stored } = setup();
      const object = await kube.apply(widgets, widget(namespace, "held", { size: 1 }));
      expect(await kube.ensureFinalizer(widgets, object, "port.test/hold")).toBe(true);
      const held = (await stored("held"))!;
      expect(held.metadata?.finalizers).toEqual(["port.test/hold"]);
      expect(await kube.ensureFinalizer(widgets, held, "port.test/hold")).toBe(false);
      // A finalizer added from a stale read would overwrite the newer list: it conflicts instead.
      expect(conflicted(await failure(() => kube.ensureFinalizer(widgets, object, "port.test/other")))).toBe(
        true,
      );

      await kube.delete(widgets, { namespace, name: "held" });
      const deleting = (await stored("held"))!;
      expect(deleting.metadata?.deletionTimestamp).toBeTruthy();
      await kube.delete(widgets, { namespace, name: "held" });
      await kube.removeFinalizer(widgets, deleting, "port.test/hold");
      expect(await stored("held")).toBeUndefined();
      // Gone already: removing the finalizer again and deleting again are done, not errors.
      await kube.removeFinalizer(widgets, deleting, "port.test/hold");
      await kube.delete(widgets, { namespace, name: "held" });
    });

    it("deletes an object without finalizers at once", async () => {
      const { kube, namespace, stored } = setup();
      await kube.apply(widgets, widget(namespace, "plain", { size: 1 }));
      await kube.delete(widgets, { namespace, name: "plain" });
      expect(await stored("plain")).toBeUndefined();
    });

    it("merge-patches metadata: a map's other keys stay, and a stale read conflicts", async () => {
      const { kube, namespace, stored } = setup();
      const object = await kube.create(widgets, widget(namespace, "patched", { size: 1 }, { a: "1" }));
      const patched = await kube.patchMetadata(widgets, object, { labels: { b: "2" } });
      expect(patched.metadata?.labels).toEqual({ a: "1", b: "2" });
      expect((await stored("patched"))?.metadata?.labels).toEqual({ a: "1", b: "2" });
      const error = await failure(() => kube.patchMetadata(widgets, object, { labels: { c: "3" } }));
      expect(conflicted(error)).toBe(true);
    });
  });
}
