// The built-in topology controller's passes through the gatekeeper, on the fake port and broker: a
// rejected Vhost is not declared and says why in Ready; a mutating plugin's spec is what the broker gets
// for the pass while the stored spec stays; a deletion goes ahead whatever a plugin throws.
import { describe, expect, it } from "vitest";
import { vhostKind } from "../../src/api/index.ts";
import { GATEKEEPER_API_VERSION, type GatekeeperPlugin } from "../../src/gatekeeper/api.ts";
import { Gatekeeper } from "../../src/gatekeeper/gatekeeper.ts";
import { TransientError } from "../../src/runtime/base/errors.ts";
import { namespace, newPass, putManagedBus, readyOf, reconcileKind, ref } from "../topology/pass-support.ts";
import { RecordingLog } from "./support.ts";

const gatekeeperOf = (plugin: GatekeeperPlugin) =>
  new Gatekeeper({
    plugins: { mandatory: [], default: [], custom: [plugin] },
    log: new RecordingLog(),
    clock: { now: () => 0, monotonic: () => 0 },
  });

const noTracing: GatekeeperPlugin = {
  apiVersion: GATEKEEPER_API_VERSION,
  name: "no-tracing",
  validating: {
    Vhost: {
      entry(_context, vhost) {
        if (vhost.spec.tracing) throw new Error("tracing is not allowed on this platform");
      },
    },
  },
};

const tagger: GatekeeperPlugin = {
  apiVersion: GATEKEEPER_API_VERSION,
  name: "tagger",
  mutating: {
    Vhost: {
      entry: (_context, vhost) => ({ ...vhost, spec: { ...vhost.spec, tags: ["platform"] } }),
    },
  },
};

describe("a topology kind through the gatekeeper", () => {
  it("a rejected Vhost is not declared, holds no finalizer and reads Ready False GatekeeperRejected", async () => {
    const { kube, broker, deps } = newPass();
    putManagedBus(kube);
    kube.put(vhostKind, { metadata: { name: "v", namespace }, spec: { name: "v1", tracing: true, ...ref } });
    const gated = { ...deps, gatekeeper: gatekeeperOf(noTracing) };
    const error = await reconcileKind(gated, vhostKind, "v").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransientError);
    expect(readyOf(kube.read(vhostKind, namespace, "v"))).toMatchObject({
      status: "False",
      reason: "GatekeeperRejected",
      message: 'gatekeeper plugin "no-tracing" rejected this Vhost: tracing is not allowed on this platform',
    });
    expect(kube.read(vhostKind, namespace, "v")?.metadata?.finalizers ?? []).toEqual([]);
    expect(broker.has("/api/vhosts/v1")).toBe(false);
  });

  it("a mutating plugin's spec is declared for the pass; the stored spec stays the tenant's", async () => {
    const { kube, broker, deps } = newPass();
    putManagedBus(kube);
    kube.put(vhostKind, { metadata: { name: "v", namespace }, spec: { name: "v1", ...ref } });
    const gated = { ...deps, gatekeeper: gatekeeperOf(tagger) };
    for (let i = 0; i < 3 && readyOf(kube.read(vhostKind, namespace, "v"))?.["status"] !== "True"; i++)
      await reconcileKind(gated, vhostKind, "v");
    expect(readyOf(kube.read(vhostKind, namespace, "v"))).toMatchObject({ status: "True" });
    expect(broker.requests.filter((r) => r === "PUT /api/vhosts/v1")).toHaveLength(1);
    expect(JSON.stringify(broker.objectAt("/api/vhosts/v1"))).toContain("platform");
    expect(kube.read(vhostKind, namespace, "v")?.["spec"]).not.toHaveProperty("tags");
  });

  it("a deletion goes ahead whatever a plugin throws at entry", async () => {
    const { kube, broker, deps } = newPass();
    putManagedBus(kube);
    kube.put(vhostKind, { metadata: { name: "v", namespace }, spec: { name: "v1", ...ref } });
    for (let i = 0; i < 3 && !broker.has("/api/vhosts/v1"); i++) await reconcileKind(deps, vhostKind, "v");
    kube.put(vhostKind, {
      ...kube.read(vhostKind, namespace, "v")!,
      spec: { name: "v1", tracing: true, ...ref },
    });
    await kube.delete(vhostKind, { namespace, name: "v" });
    await reconcileKind({ ...deps, gatekeeper: gatekeeperOf(noTracing) }, vhostKind, "v");
    expect(kube.read(vhostKind, namespace, "v")).toBeUndefined();
    expect(broker.has("/api/vhosts/v1")).toBe(false);
  });
});
