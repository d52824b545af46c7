// Target clusters registered and deregistered through kubeconfig Secrets on the management cluster,
// and a manager reconciling objects of both clusters.
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClusterRegistry } from "../../src/clusters/registry.ts";
import { realClock } from "../../src/runtime/base/clock.ts";
import type { Cluster } from "../../src/runtime/port/cluster.ts";
import { loadConfig, runtimeSettings } from "../../src/runtime/process/config.ts";
import type { Request } from "../../src/runtime/loop/controller.ts";
import { KubeRest } from "../../src/runtime/port/kube-rest.ts";
import { Manager } from "../../src/runtime/process/manager.ts";
import { Metrics } from "../../src/runtime/loop/metrics.ts";
import { localEnv } from "../../harness/world/env.ts";
import { freshNamespace, testCluster } from "../../harness/world/kube.ts";
import { freePort } from "../../harness/world/ports.ts";
import { embeddedKubeconfig, memoryLogger, serviceAccountToken, tokenKubeconfig, until } from "./support.ts";

const management = testCluster("management");
const target = testCluster("target");
const b64 = (s: string) => Buffer.from(s).toString("base64");
const label = { "sigs.k8s.io/multicluster-runtime-kubeconfig": "true" };
let secretNs = "";
let targetNs = "";
let managementNs = "";

beforeAll(async () => {
  secretNs = await freshNamespace(management, "clusters");
  managementNs = await freshNamespace(management, "mgmt-work");
  targetNs = await freshNamespace(target, "target-work");
});

afterAll(async () => {
  await management.core.deleteNamespace({ name: secretNs }).catch(() => undefined);
  await management.core.deleteNamespace({ name: managementNs }).catch(() => undefined);
  await target.core.deleteNamespace({ name: targetNs }).catch(() => undefined);
});

function clusterSecret(
  name: string,
  kubeconfig: string,
  namespaces?: string,
  namespace = secretNs,
): k8s.V1Secret {
  return {
    metadata: { name, namespace, labels: label },
    data: { kubeconfig: b64(kubeconfig), ...(namespaces ? { namespaces: b64(namespaces) } : {}) },
  };
}

describe("cluster registry", () => {
  const { log, lines } = memoryLogger();
  const events: string[] = [];
  const engaged = new Map<string, Cluster>();
  let registry: ClusterRegistry;

  beforeAll(async () => {
    registry = new ClusterRegistry({
      management: new KubeRest(management.kubeconfig),
      secretNamespace: secretNs,
      clock: realClock,
      log,
      resyncMs: 0,
      watchRestartMs: 60_000,
    });
    registry.subscribe({
      engage: (c) => {
        engaged.set(c.name, c);
        events.push(`engage ${c.name} ${c.namespaces?.join(",") ?? "*"}`);
      },
      disengage: (name) => {
        engaged.delete(name);
        events.push(`disengage ${name}`);
      },
    });
    await registry.start();
  });
  afterAll(async () => {
    await registry.stop();
  });

  it('engages the management cluster as "" at once', () => {
    expect(events[0]).toBe("engage  *");
  });

  it("engages, re-engages and disengages a target cluster through its Secret", async () => {
    const kubeconfig = embeddedKubeconfig(localEnv().TARGET_KUBECONFIG);
    await management.core.createNamespacedSecret({
      namespace: secretNs,
      body: clusterSecret("region-a", kubeconfig),
    });
    await until("region-a engaged", () => engaged.has("region-a"));
    // The engaged client talks to the target cluster, not the management one.
    const seen = await engaged
      .get("region-a")!
      .rest.request<{ metadata: { name: string } }>("GET", `/api/v1/namespaces/${targetNs}`);
    expect(seen.metadata.name).toBe(targetNs);

    await management.core.replaceNamespacedSecret({
      namespace: secretNs,
      name: "region-a",
      body: clusterSecret("region-a", kubeconfig, `${targetNs},other`),
    });
    await until("region-a re-engaged", () => events.includes(`engage region-a ${targetNs},other`));
    expect(events.filter((e) => e.includes("region-a"))).toEqual([
      "engage region-a *",
      "disengage region-a",
      `engage region-a ${targetNs},other`,
    ]);

    await management.core.deleteNamespacedSecret({ namespace: secretNs, name: "region-a" });
    await until("region-a disengaged", () => !engaged.has("region-a"));
    expect(events.at(-1)).toBe("disengage region-a");
  });

  it("retries an unreachable cluster without holding up the others, and refuses exec users", async () => {
    const port = await freePort();
    const good = embeddedKubeconfig(localEnv().TARGET_KUBECONFIG);
    const unreachable = embeddedKubeconfig(localEnv().TARGET_KUBECONFIG, `https://127.0.0.1:${port}`);
    const exec = good.replace(
      /users:\n[\s\S]*?contexts:/,
      "users:\n- name: admin\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: /bin/true\ncontexts:",
    );
    await management.core.createNamespacedSecret({
      namespace: secretNs,
      body: clusterSecret("down", unreachable),
    });
    await management.core.createNamespacedSecret({
      namespace: secretNs,
      body: clusterSecret("runs-code", exec),
    });
    await management.core.createNamespacedSecret({
      namespace: secretNs,
      body: clusterSecret("region-b", good),
    });
    await until("region-b engaged", () => engaged.has("region-b"));
    await until(
      "two failed attempts at the unreachable cluster",
      () =>
        lines.filter((l) => l.msg === "target cluster unreachable; will retry" && l.cluster === "down")
          .length >= 2,
    );
    expect(engaged.has("down")).toBe(false);
    expect(registry.statuses()).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: "down", state: "unreachable" }),
        {
          name: "runs-code",
          state: "refused",
          reason: 'user "admin" uses exec credentials, which are not allowed',
        },
        { name: "region-b", state: "engaged" },
      ]),
    );
    expect(
      lines.some(
        (l) => l.level === "error" && l.msg === "cluster Secret refused" && l.cluster === "runs-code",
      ),
    ).toBe(true);
    // No kubeconfig content reached the log.
    expect(JSON.stringify(lines)).not.toContain("client-key-data");
  });
});

describe("a manager on two clusters", () => {
  it("reconciles objects of the management and of a registered target cluster, and stays ready with a broken one", async () => {
    // Its own Secret namespace, so that the clusters of the registry tests stay out of this one.
    const ownSecrets = await freshNamespace(management, "clusters-mgr");
    const { log } = memoryLogger();
    const port = await freePort();
    const config = loadConfig(
      runtimeSettings,
      [
        "--leader-elect=false",
        `--metrics-bind-address=127.0.0.1:${await freePort()}`,
        "--metrics-secure=false",
        `--health-probe-bind-address=127.0.0.1:${port}`,
      ],
      {},
    );
    const rest = new KubeRest(management.kubeconfig);
    const clusters = new ClusterRegistry({
      management: rest,
      secretNamespace: ownSecrets,
      clock: realClock,
      log,
      resyncMs: 0,
      watchRestartMs: 60_000,
    });
    const manager = new Manager({
      config,
      log,
      metrics: new Metrics({ processMetrics: false }),
      clock: realClock,
      clusters,
      management: rest,
      identity: "t",
    });
    const seen: Request[] = [];
    manager.add({
      name: "work",
      watches: [
        {
          kind: { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true },
          labelSelector: "itest=work",
        },
      ],
      reconcile: async (request) => void seen.push(request),
    });
    await manager.startServers();
    const running = manager.run();
    try {
      const body = (name: string) => ({ metadata: { name, labels: { itest: "work" } } });
      await management.core.createNamespacedConfigMap({
        namespace: managementNs,
        body: body("on-management"),
      });
      await management.core.createNamespacedSecret({
        namespace: ownSecrets,
        body: clusterSecret(
          "region-c",
          embeddedKubeconfig(localEnv().TARGET_KUBECONFIG),
          targetNs,
          ownSecrets,
        ),
      });
      await until("region-c engaged", () => manager.cluster("region-c") !== undefined);
      await target.core.createNamespacedConfigMap({ namespace: targetNs, body: body("on-target") });
      await until(
        "both reconciled",
        () => seen.some((r) => r.cluster === "region-c") && seen.some((r) => r.name === "on-management"),
      );
      expect(seen).toContainEqual({ cluster: "", namespace: managementNs, name: "on-management" });
      expect(seen).toContainEqual({ cluster: "region-c", namespace: targetNs, name: "on-target" });
      await until("caches synced", () => manager.ready().ready);
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
      expect(ready.status).toBe(200);

      // A mis-registered target: it answers /version, but its token may list nothing, so its caches
      // never sync. It shows in the metrics; the leader stays ready.
      const token = await serviceAccountToken(target.core, targetNs, "no-rights");
      await management.core.createNamespacedSecret({
        namespace: ownSecrets,
        body: clusterSecret(
          "region-broken",
          tokenKubeconfig(localEnv().TARGET_KUBECONFIG, token),
          targetNs,
          ownSecrets,
        ),
      });
      await until("region-broken engaged", () => manager.cluster("region-broken") !== undefined);
      await new Promise((r) => setTimeout(r, 2000));
      expect(manager.synced("region-broken")).toBe(false);
      expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
      expect(
        manager.cached(
          "region-c",
          { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true },
          targetNs,
          "on-target",
        ),
      ).toBeDefined();
    } finally {
      await manager.shutdown();
      await running;
      await management.core.deleteNamespace({ name: ownSecrets }).catch(() => undefined);
    }
  });
});
