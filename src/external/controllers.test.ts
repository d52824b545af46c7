import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { secretKind } from "../api/index.ts";
import { TransientError } from "../runtime/base/errors.ts";
import type { Kind, KubeObject } from "../runtime/port/kube-rest.ts";
import type { Manager } from "../runtime/process/manager.ts";
import { FakeKube } from "../../harness/fakes/fake-kube.ts";
import { managementRequests, onManagement, secretWatch } from "./controllers.ts";

const widgetKind: Kind = {
  group: "example.com",
  version: "v1",
  plural: "widgets",
  kind: "Widget",
  namespaced: true,
};
const widget = (namespace: string, name: string, secret: string): KubeObject => ({
  metadata: { namespace, name },
  spec: { passwordSecret: secret },
});

describe("managementRequests", () => {
  it("asks for each object on the management cluster", () => {
    expect(managementRequests([widget("app", "a", "s"), { metadata: { name: "b" } }])).toEqual([
      { cluster: "", namespace: "app", name: "a" },
      { cluster: "", namespace: "", name: "b" },
    ]);
  });
});

describe("onManagement", () => {
  const context = { log: pino({ enabled: false }), signal: new AbortController().signal, queuedAt: 0 };
  const request = { cluster: "", namespace: "app", name: "a" };

  it("hands the pass the management cluster's port, bound to the reconcile's signal", async () => {
    const kube = new FakeKube();
    const asked: [string, AbortSignal | undefined][] = [];
    const manager = {
      kube: (cluster: string, signal?: AbortSignal) => (asked.push([cluster, signal]), kube),
    };
    const reconcile = onManagement(manager as unknown as Manager, async (port, _log, r) => {
      expect(port).toBe(kube);
      return { requeueAfterMs: r.name.length };
    });
    expect(await reconcile(request, context)).toEqual({ requeueAfterMs: 1 });
    expect(asked).toEqual([["", context.signal]]);
  });

  it("looks again later while the management cluster is not engaged", async () => {
    const manager = { kube: () => undefined } as unknown as Manager;
    await expect(onManagement(manager, async () => ({}))(request, context)).rejects.toThrow(TransientError);
  });
});

describe("secretWatch", () => {
  const cached = [widget("app", "a", "pw"), widget("app", "b", "other"), widget("elsewhere", "c", "pw")];
  const manager = { cachedList: (_cluster: string, kind: Kind) => (kind === widgetKind ? cached : []) };
  const watch = secretWatch(
    manager as unknown as Manager,
    widgetKind,
    "example.com/watch",
    (o, secret) =>
      o.metadata?.namespace === secret.namespace &&
      (o["spec"] as { passwordSecret: string }).passwordSecret === secret.name,
  );

  it("watches the labelled Secrets of the management cluster", () => {
    expect(watch).toMatchObject({
      kind: secretKind,
      clusters: "management",
      labelSelector: "example.com/watch",
    });
  });

  it("wakes the cached objects that read the Secret, and no other", () => {
    expect(watch.map?.({ metadata: { namespace: "app", name: "pw" } }, "")).toEqual([
      { cluster: "", namespace: "app", name: "a" },
    ]);
    expect(watch.map?.({ metadata: { namespace: "app", name: "unread" } }, "")).toEqual([]);
  });
});
