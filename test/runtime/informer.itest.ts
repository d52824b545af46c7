// The informer against real kube-apiservers: events from the shared management cluster, and
// recovery after a private kube-apiserver (ours alone, on the shared etcd) is killed and restarted.
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { realClock } from "../../src/runtime/base/clock.ts";
import { Informer } from "../../src/runtime/port/informer.ts";
import { parseKubeconfig } from "../../src/runtime/port/kubeconfig.ts";
import { KubeRest, type Kind, type KubeObject } from "../../src/runtime/port/kube-rest.ts";
import { freshNamespace, testCluster } from "../../harness/world/kube.ts";
import {
  kubeConfigFromString,
  memoryLogger,
  privateApiserver,
  until,
  type PrivateApiserver,
} from "./support.ts";

const configMaps: Kind = {
  group: "",
  version: "v1",
  plural: "configmaps",
  kind: "ConfigMap",
  namespaced: true,
};

function recorder() {
  const events: string[] = [];
  return {
    events,
    handler: {
      add: (o: KubeObject) => events.push(`add ${o.metadata?.name}`),
      update: (_p: KubeObject, o: KubeObject) =>
        events.push(`update ${o.metadata?.name} ${o.data ? JSON.stringify(o.data) : ""}`),
      delete: (o: KubeObject) => events.push(`delete ${o.metadata?.name}`),
      resync: (o: KubeObject) => events.push(`resync ${o.metadata?.name}`),
    },
  };
}

describe("informer on the management cluster", () => {
  const cluster = testCluster("management");
  let ns = "";
  let informer: Informer | undefined;

  beforeAll(async () => {
    ns = await freshNamespace(cluster, "informer");
  });
  afterAll(async () => {
    await informer?.stop();
    await cluster.core.deleteNamespace({ name: ns }).catch(() => undefined);
  });

  it("lists, then reports adds, updates and deletes of label-selected objects, and resyncs", async () => {
    await cluster.core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: "before", labels: { app: "x" } } },
    });
    await cluster.core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: "unlabelled" } },
    });
    const { events, handler } = recorder();
    informer = new Informer({
      rest: new KubeRest(cluster.kubeconfig),
      kind: configMaps,
      namespace: ns,
      labelSelector: "app=x",
      clock: realClock,
      log: memoryLogger().log,
      resyncMs: 1500,
      watchRestartMs: 60_000,
    });
    informer.addHandler(handler);
    expect(informer.synced()).toBe(false);
    informer.start();
    await until("the first list", () => informer!.synced());
    expect(events).toEqual(["add before"]);

    await cluster.core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: "after", labels: { app: "x" } } },
    });
    await until("the add", () => events.includes("add after"));
    await cluster.core.patchNamespacedConfigMap(
      { namespace: ns, name: "after", body: { data: { k: "v" } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
    await until("the update", () => events.includes('update after {"k":"v"}'));
    expect(informer.get(`${ns}/after`)?.data).toEqual({ k: "v" });
    await cluster.core.deleteNamespacedConfigMap({ namespace: ns, name: "before" });
    await until("the delete", () => events.includes("delete before"));
    expect(informer.get(`${ns}/before`)).toBeUndefined();
    await until("a resync of every cached object", () => events.includes("resync after"));
    expect(events.some((e) => e.includes("unlabelled"))).toBe(false);
  });
});

describe("informer across a kube-apiserver restart", () => {
  let apiserver: PrivateApiserver;
  let informer: Informer | undefined;

  beforeAll(async () => {
    apiserver = await privateApiserver();
    await apiserver.start();
  }, 120_000);
  afterAll(async () => {
    await informer?.stop();
    await apiserver?.stop();
    await apiserver?.purge();
  });

  it("keeps watching after the server comes back, and sees what changed meanwhile", async () => {
    const config = kubeConfigFromString(apiserver.kubeconfig);
    const core = config.makeApiClient(k8s.CoreV1Api);
    const { log, lines } = memoryLogger();
    const { events, handler } = recorder();
    await core.createNamespacedConfigMap({
      namespace: "default",
      body: { metadata: { name: "one", labels: { t: "r" } } },
    });
    informer = new Informer({
      rest: new KubeRest(parseKubeconfig(apiserver.kubeconfig, "the private API server")),
      kind: configMaps,
      namespace: "default",
      labelSelector: "t=r",
      clock: realClock,
      log,
      resyncMs: 0,
      watchRestartMs: 60_000,
    });
    informer.addHandler(handler);
    informer.start();
    await until("the first list", () => events.includes("add one"));

    await apiserver.stop();
    await until("the informer to notice the outage", () =>
      lines.some((l) => l.msg === "list/watch failed; restarting with backoff"),
    );
    await apiserver.start();

    await core.createNamespacedConfigMap({
      namespace: "default",
      body: { metadata: { name: "two", labels: { t: "r" } } },
    });
    await core.deleteNamespacedConfigMap({ namespace: "default", name: "one" });
    await until(
      "events after the restart",
      () => events.includes("add two") && events.includes("delete one"),
      60_000,
    );
    expect(informer.list().map((o) => o.metadata?.name)).toEqual(["two"]);
  });
});
