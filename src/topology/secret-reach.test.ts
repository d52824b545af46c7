// Under --secret-namespaces, a topology object whose Secrets lie in a namespace outside the list (its
// RabbitmqCluster's default-user Secret, a connection Secret, a User's credentials beside it) is
// reported on its Ready condition, gets no finalizer, and not one Secret is asked for: the chart's
// Roles would refuse the request.
import { describe, expect, it } from "vitest";
import { secretKind, userKind, vhostKind } from "../api/index.ts";
import { createLogger } from "../runtime/base/logging.ts";
import { FakeKube } from "../../harness/fakes/fake-kube.ts";
import { createControllerDeps } from "./deps.ts";
import { outOfReach, reconcileExternal, type AnyExternalKind } from "../external/index.ts";
import type { Kind } from "../runtime/port/kube-rest.ts";
import { topologyKind, type Broker } from "./backend.ts";
import type { ControllerDeps } from "./deps.ts";

const deps = (kube: FakeKube, secretNamespaces: string[]) =>
  createControllerDeps(kube, {
    ownership: { enabled: true, clusters: { serve: "all" }, connectionSecrets: true },
    logger: createLogger({ level: "fatal" }),
    settings: { secretNamespaces },
  });

// Only the metadata and the reference count here: any kind's object will do.
const object = (namespace: string, spec: Record<string, unknown>) =>
  ({
    metadata: { name: "o", namespace },
    spec: { rabbitmqClusterReference: { name: "rabbitmq" }, ...spec },
  }) as never;

describe("the namespaces out of reach", () => {
  it("are none without a list", () => {
    expect(outOfReach(topologyKind.vhost, [], object("a", {}))).toEqual([]);
  });

  it("are the broker's namespace for a Vhost, and a User's own besides", () => {
    expect(outOfReach(topologyKind.vhost, ["b"], object("a", {}))).toEqual(["a"]);
    const elsewhere = object("a", { rabbitmqClusterReference: { name: "rabbitmq", namespace: "b" } });
    expect(outOfReach(topologyKind.vhost, ["b"], elsewhere)).toEqual([]);
    expect(outOfReach(topologyKind.user, ["b"], elsewhere)).toEqual(["a"]);
    expect(outOfReach(topologyKind.user, ["a", "b"], elsewhere)).toEqual([]);
  });
});

describe("a topology object whose Secrets are out of reach", () => {
  it("reads SecretsOutOfReach, carries no finalizer and no Secret is read", async () => {
    const kinds: [Kind, AnyExternalKind<ControllerDeps, Broker>][] = [
      [vhostKind, topologyKind.vhost],
      [userKind, topologyKind.user],
    ];
    for (const [kind, external] of kinds) {
      const kube = new FakeKube();
      kube.put(kind, object("stray", { name: "v" }));
      expect(await reconcileExternal(external, deps(kube, ["listed"]), "stray", "o")).toEqual({});
      const stored = kube.read(kind, "stray", "o");
      expect(stored?.metadata?.finalizers ?? []).toEqual([]);
      const ready = (
        stored?.["status"] as { conditions?: { type: string; reason: string; message: string }[] }
      )?.conditions?.find((c) => c.type === "Ready");
      expect(ready?.reason).toBe("SecretsOutOfReach");
      expect(ready?.message).toContain('namespace "stray"');
      expect(ready?.message).toContain("rbac.secretNamespaces");
      expect(kube.calls.filter((c) => c.kind === secretKind.kind)).toEqual([]);
    }
  });
});
