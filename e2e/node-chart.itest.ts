// deploy/vhost-broker as a platform team installs it, under real kubelets: the image scripts/image.sh
// builds, imported into the containerd of each of the local environment's nodes
// (scripts/localenv.sh node); `helm install --wait` of two replicas, whose pods the kubelets start and
// find Ready through the chart's probes; `helm test`, whose check pod runs there too; an order delivered
// by them; `helm upgrade` to a changed image (another config, so another image ID) rolling both pods
// while a tenant's consumer logs in every second; `helm uninstall`, after which the CRDs, the orders,
// their Secrets and the broker's users are still there. The release installs the CRDs (adopting the
// cluster's copies, which the other tests share, and giving them back as they were at the end).
//
// Before that, the target-cluster chart (deploy/target-cluster-access) as docs/target-clusters.md has a
// platform team install it: `helm install --wait` on the local target cluster, the registration built
// from its token, an order placed on the target cluster delivered by the release's pods; `helm uninstall`
// takes the ServiceAccount, its token and the Role away and keeps the CRDs, the tenant's namespace, the
// order and its Secret; installed again and registered with the new token, the pods serve the kept order
// again.
//
// What the nodes lack beside a cluster (a pod network, the ServiceAccount admission plugin) is given by
// a post-renderer, harness/charts/node-post-renderer.ts, which says what it changes; the API server is
// named to the pods through extraEnv, as on a cluster without kube-proxy. Helm 3 post-renders the
// release's manifest but not its hooks, so the test Pod stored with the release is given the same
// (harness/charts/stored-hooks.ts).
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as yaml from "yaml";
import { userName, vhostName } from "../src/orders/rabbitmq/naming.ts";
import { createControlPlane } from "../harness/world/managed-bus.ts";
import { localEnv } from "../harness/world/env.ts";
import {
  eventually,
  freshNamespace,
  isApiError,
  testCluster,
  type TestCluster,
} from "../harness/world/kube.ts";
import { helmBinary, localKubeVersion, manifestObjects } from "../harness/charts/helm.ts";
import { adaptStoredTestPods } from "../harness/charts/stored-hooks.ts";
import { amqpLogin, LoginProber, type ProberCounts } from "../harness/probes/login-prober.ts";
import {
  importImage,
  localImageRepository,
  nodeSettings,
  nodesRunning,
  nodeStartTimeoutMs,
  startNodes,
  stopNodes,
  writePostRenderer,
  type NodeSettings,
} from "./support/node.ts";
import {
  holdOperatorLock,
  OperatorProcess,
  releaseOperatorLock,
} from "../harness/operator/operator-process.ts";
import { restartEvidence } from "./support/restart-evidence.ts";
import { buildImage } from "../harness/operator/runc-container.ts";
import {
  readSecret as readSecretIn,
  registerCluster,
  tokenKubeconfig,
} from "../harness/world/target-cluster.ts";
import {
  applyOrder,
  applyOrderIn,
  brokerApi,
  condition,
  createWorld,
  destroyWorld,
  isReady,
  readOrder,
  readOrderIn,
  readSecret,
  waitForOrder,
  waitForOrderIn,
  type World,
} from "../harness/world/world.ts";

const run = promisify(execFile);
const chart = fileURLToPath(new URL("../deploy/vhost-broker", import.meta.url));
const accessChart = fileURLToPath(new URL("../deploy/target-cluster-access", import.meta.url));
const ORDER = "noded";
/** The target cluster's name in its registration, and the order placed there. */
const TARGET = "node-target";
const EDGE = "edge";
const SELECTOR = (release: string) =>
  `app.kubernetes.io/name=vhost-broker,app.kubernetes.io/instance=${release}`;

/** Why the nodes cannot run here, if they cannot: containerd, runc and an address on lo need root. */
const cannotRun = process.getuid?.() !== 0 ? "the nodes need root (containerd, runc, an address on lo)" : "";

interface Adopted {
  name: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

describe.skipIf(cannotRun !== "")(
  `the chart under a kubelet${cannotRun ? ` (skipped: ${cannotRun})` : ""}`,
  () => {
    const work = mkdtempSync(`${tmpdir()}/vhost-broker-node-chart-`);
    let startedNodes = false;
    let settings: NodeSettings;
    let world: World | undefined;
    let namespace = "";
    const release = `vb-node-${process.pid}`;
    let installed = false;
    let tags: { first: string; changed: string };
    let postRenderer: string;
    let adopted: Adopted[] = [];
    let prober: LoginProber | undefined;
    let counts: ProberCounts | undefined;
    let firstPods: string[] = [];
    // The target-cluster chart: its release namespace and the tenant namespace it assigns (and creates)
    // on the target cluster; the registration Secrets' namespace on the management cluster.
    const target: TestCluster = testCluster("target");
    const suffix = randomBytes(3).toString("hex");
    const access = { release: "vhost-broker-access", namespace: `node-access-${suffix}` };
    const edgeNs = `node-edge-${suffix}`;
    let clusterSecretNs = "";
    let accessInstalled = false;
    const w = (): World => {
      if (!world) throw new Error("no world");
      return world;
    };

    /** helm on the management cluster in the release's namespace, or on `on`'s cluster and namespace. */
    const helm = async (
      args: string[],
      on = { kubeconfig: localEnv().KUBECONFIG, namespace },
      timeoutMs = 300_000,
    ): Promise<string> => {
      const binary = helmBinary();
      if (!binary) throw new Error("helm is not built; run scripts/localenv.sh up");
      const { stdout } = await run(
        binary,
        [...args, "--namespace", on.namespace, "--kubeconfig", on.kubeconfig],
        {
          timeout: timeoutMs,
          maxBuffer: 16 * 1024 * 1024,
        },
      );
      return stdout;
    };

    /** The release's values for an image tag, as a file. */
    const valuesFile = (tag: string): string => {
      const server = new URL(w().cluster.config.getCurrentCluster()?.server ?? "");
      const values = {
        image: { registry: localImageRepository.split("/")[0], repository: "vhost-broker", tag },
        replicas: 2,
        settings: { "openbao-address": localEnv().BAO_ADDR, "cluster-secret-namespace": clusterSecretNs },
        openbao: { tokenSecret: { name: "openbao-token", key: "token" } },
        tolerations: [{ key: settings.taintKey, operator: "Exists", effect: "NoSchedule" }],
        // No kube-proxy: the API server where the pods (on the host's network) reach it.
        extraEnv: [
          { name: "KUBERNETES_SERVICE_HOST", value: server.hostname },
          { name: "KUBERNETES_SERVICE_PORT", value: server.port },
        ],
      };
      const path = `${work}/values-${tag}.yaml`;
      writeFileSync(path, yaml.stringify(values));
      return path;
    };

    const pods = async (): Promise<k8s.V1Pod[]> =>
      (await w().cluster.core.listNamespacedPod({ namespace, labelSelector: SELECTOR(release) })).items;

    const ready = (pod: k8s.V1Pod): boolean =>
      pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true;

    const leaseHolder = async (): Promise<string | undefined> => {
      const coordination = w().cluster.config.makeApiClient(k8s.CoordinationV1Api);
      const lease = await coordination.readNamespacedLease({ namespace, name: `${release}-vhost-broker` });
      return lease.spec?.holderIdentity;
    };

    /** Gives the CRDs the release installs to it, as helm adopts an object: its ownership metadata. */
    const adoptCrds = async (): Promise<void> => {
      const manifest = await helm([
        "template",
        release,
        chart,
        "--values",
        valuesFile(tags.first),
        "--kube-version",
        localKubeVersion() ?? "",
      ]);
      const names = manifestObjects(manifest)
        .filter((o) => o.kind === "CustomResourceDefinition")
        .map((o) => o.metadata.name);
      for (const name of names) {
        const crd = await w().cluster.extensions.readCustomResourceDefinition({ name });
        adopted.push({
          name,
          labels: { ...crd.metadata?.labels },
          annotations: { ...crd.metadata?.annotations },
        });
        await patchCrd(name, {
          labels: { "app.kubernetes.io/managed-by": "Helm" },
          annotations: { "meta.helm.sh/release-name": release, "meta.helm.sh/release-namespace": namespace },
        });
      }
    };

    const patchCrd = (name: string, metadata: Record<string, unknown>) =>
      w().cluster.extensions.patchCustomResourceDefinition(
        { name, body: { metadata } },
        k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
      );

    /** The CRDs' labels and annotations as they were before the release (the other tests share them). */
    const restoreCrds = async (): Promise<void> => {
      for (const before of adopted) {
        const crd = await w().cluster.extensions.readCustomResourceDefinition({ name: before.name });
        const back = (now: Record<string, string> | undefined, was: Record<string, string>) => ({
          ...Object.fromEntries(Object.keys(now ?? {}).map((k) => [k, null])),
          ...was,
        });
        await patchCrd(before.name, {
          labels: back(crd.metadata?.labels, before.labels),
          annotations: back(crd.metadata?.annotations, before.annotations),
        });
      }
      adopted = [];
    };

    const onTarget = () => ({ kubeconfig: localEnv().TARGET_KUBECONFIG, namespace: access.namespace });
    const edgeKey = { cluster: TARGET, namespace: edgeNs, name: EDGE };
    const edgeSpec = (passwordGeneration: number) => ({
      controlPlaneRef: w().controlPlane,
      rotation: { interval: "0s", gracePeriod: "1m" },
      passwordGeneration,
    });
    const edgeCredentials = async (): Promise<Record<string, string>> =>
      (await readSecretIn(target, edgeNs, `${EDGE}-credentials`))?.data ?? {};

    /**
     * The target-cluster chart as docs/target-clusters.md installs it (`helm install --wait`, the assigned
     * namespace created by the chart), and the registration on the management cluster built from its
     * token.
     */
    const installAccess = async (): Promise<void> => {
      const t0 = Date.now();
      await helm(
        [
          "install",
          access.release,
          accessChart,
          "--create-namespace",
          "--set",
          `assignedNamespaces={${edgeNs}}`,
          "--set",
          "createNamespaces=true",
          "--wait",
          "--timeout",
          "2m",
        ],
        onTarget(),
      );
      accessInstalled = true;
      console.log(`helm install --wait of the target-cluster chart: ${Date.now() - t0} ms`);
      const kubeconfig = await tokenKubeconfig(target, access.namespace, TARGET);
      await registerCluster(w().cluster, {
        name: TARGET,
        namespace: clusterSecretNs,
        kubeconfig,
        namespaces: [edgeNs],
      });
    };

    /**
     * The order on the target cluster goes as a tenant's order does: deleted and torn down by an
     * operator that reaches the target through the chart (installed again if a test left it out);
     * then the chart and the namespaces.
     */
    const tearDownEdge = async (): Promise<void> => {
      const orders = target.config.makeApiClient(k8s.CustomObjectsApi);
      const api = { group: "c5c3.io", version: "v1alpha1", plural: "rabbitmqvhosts", namespace: edgeNs };
      try {
        if (await readOrderIn(target, edgeNs, EDGE)) {
          if (!accessInstalled) await installAccess();
          await orders.deleteNamespacedCustomObject({ ...api, name: EDGE });
          await eventually(
            "the operator to tear down the order on the target cluster",
            async () => ((await readOrderIn(target, edgeNs, EDGE)) ? undefined : true),
            60_000,
            500,
          );
        }
      } catch (error) {
        const patch = k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch);
        await orders
          .patchNamespacedCustomObject(
            { ...api, name: EDGE, body: { metadata: { finalizers: null } } },
            patch,
          )
          .catch(() => undefined);
        throw error;
      } finally {
        if (accessInstalled)
          await helm(["uninstall", access.release, "--wait"], onTarget()).catch(() => undefined);
        for (const name of [edgeNs, access.namespace]) {
          await target.core.deleteNamespace({ name }).catch(() => undefined);
        }
      }
    };

    beforeAll(async () => {
      if (!(await nodesRunning())) {
        startedNodes = true;
        await startNodes();
      }
      settings = await nodeSettings();
      // The chart's replicas reconcile every order on the cluster, as an operator process does.
      await holdOperatorLock();
      const ref = await buildImage();
      const [layout, tag] = [
        ref.slice("oci:".length, ref.lastIndexOf(":")),
        ref.slice(ref.lastIndexOf(":") + 1),
      ];
      // A copy of the layout with a second image: the same layer under another config (a label), so the
      // upgrade changes the image ID as a rebuild would.
      cpSync(layout, `${work}/oci`, { recursive: true });
      tags = { first: tag, changed: `${tag}-changed` };
      await run("umoci", [
        "config",
        "--image",
        `${work}/oci:${tags.first}`,
        "--tag",
        tags.changed,
        "--config.label",
        "org.opencontainers.image.revision=changed",
      ]);
      await importImage(`${work}/oci`);
      postRenderer = writePostRenderer(work);
      world = await createWorld("node");
      namespace = await freshNamespace(w().cluster, "node-chart");
      clusterSecretNs = await freshNamespace(w().cluster, "node-clusters");
      await w().cluster.core.createNamespacedSecret({
        namespace,
        body: { metadata: { name: "openbao-token" }, stringData: { token: localEnv().BAO_TOKEN } },
      });
      await adoptCrds();
    }, nodeStartTimeoutMs);

    afterAll(async () => {
      let operator: OperatorProcess | undefined;
      try {
        if (prober) await prober.stop();
        if (installed) await helm(["uninstall", release, "--wait"]).catch(() => undefined);
        if (world) await restoreCrds();
        // The orders outlive the release: an operator process tears them down with the world.
        if (world) {
          operator = await OperatorProcess.start({ clusterSecretNamespace: clusterSecretNs });
          await tearDownEdge();
        }
        await destroyWorld(world);
      } finally {
        await operator?.stop();
        releaseOperatorLock();
        for (const name of [namespace, clusterSecretNs].filter((n) => n !== "")) {
          await world?.cluster.core.deleteNamespace({ name }).catch(() => undefined);
        }
        if (startedNodes) await stopNodes();
        rmSync(work, { recursive: true, force: true });
      }
    }, 600_000);

    it("installs with helm --wait: two pods on two nodes, Ready through the kubelets' probes", async () => {
      const t0 = Date.now();
      await helm([
        "install",
        release,
        chart,
        "--values",
        valuesFile(tags.first),
        "--post-renderer",
        postRenderer,
        "--wait",
        "--timeout",
        "5m",
      ]);
      installed = true;
      console.log(`helm install --wait: ${Date.now() - t0} ms`);
      const running = await pods();
      expect(running).toHaveLength(2);
      for (const pod of running) {
        expect(pod.status?.phase).toBe("Running");
        expect(ready(pod)).toBe(true);
        expect(pod.spec?.nodeName).toMatch(/^localenv-node-\d+$/);
        expect(pod.spec?.containers[0]?.image).toBe(`${localImageRepository}:${tags.first}`);
        expect(pod.spec?.containers[0]?.readinessProbe?.httpGet?.path).toBe("/readyz");
        const status = pod.status?.containerStatuses?.[0];
        const evidence = await restartEvidence(w().cluster.core, pod);
        if (evidence) console.log(`a restarted container:\n${evidence}`);
        expect(status, evidence).toMatchObject({ ready: true, started: true, restartCount: 0 });
        // The probe the kubelet runs answers there, on the pod's IP (the node's address).
        const port = pod.spec?.containers[0]?.ports?.find((p) => p.name === "probes")?.containerPort;
        const answer = await fetch(`http://${pod.status?.podIP}:${port}/readyz`);
        expect(answer.status).toBe(200);
      }
      expect(new Set(running.map((p) => p.spec?.nodeName)).size).toBe(2);
      firstPods = running.map((p) => p.metadata?.name ?? "");
      expect(firstPods).toContain(await leaseHolder());
    }, 360_000);

    it("helm test: the chart's check pod passes under a kubelet, finding the CRDs and the leader", async () => {
      expect(await adaptStoredTestPods(w().cluster.core, namespace, release)).toBe(1);
      const t0 = Date.now();
      const out = await helm(["test", release, "--logs", "--timeout", "2m"], undefined, 150_000);
      console.log(`helm test: ${Date.now() - t0} ms\n${out}`);
      expect(out).toMatch(/^Phase:\s+Succeeded$/m);
      const passed = new RegExp(
        `^vhost-broker check: passed: \\d+ kinds served and listable in ${namespace}; Lease ${namespace}/${release}-vhost-broker held by (\\S+),`,
        "m",
      ).exec(out);
      expect(firstPods).toContain(passed?.[1]);
      const check = await w().cluster.core.readNamespacedPod({
        namespace,
        name: `${release}-vhost-broker-check`,
      });
      expect(check.spec?.nodeName).toMatch(/^localenv-node-\d+$/);
    }, 180_000);

    it("delivers an order", async () => {
      await applyOrder(w(), ORDER, { rotation: { interval: "0s", gracePeriod: "1m" } });
      const order = await waitForOrder(w(), ORDER, `${ORDER} Ready`, isReady, 120_000);
      expect(condition(order, "DeliveryReady")?.reason).toBe("Delivered");
      const data = await readSecret(w(), w().tenantNs, `${ORDER}-credentials`);
      expect(await amqpLogin(data["transport_url"] ?? "")).toEqual({ kind: "ok" });
    }, 180_000);

    it("helm upgrade to a changed image rolls both pods; a consumer logging in every second is never refused", async () => {
      prober = new LoginProber({
        core: w().cluster.core,
        namespace: w().tenantNs,
        order: ORDER,
        intervalMs: 1_000,
        maxDurationMs: 600_000,
      }).start();
      await new Promise((r) => setTimeout(r, 3_000));
      const t0 = Date.now();
      await helm([
        "upgrade",
        release,
        chart,
        "--values",
        valuesFile(tags.changed),
        "--post-renderer",
        postRenderer,
        "--wait",
        "--timeout",
        "5m",
      ]);
      console.log(`helm upgrade --wait: ${Date.now() - t0} ms`);
      // Rolled: two new pods, Ready, with the changed image, and the old ones gone.
      const rolled = await eventually(
        "two Ready pods of the changed image and no other",
        async () => {
          const now = await pods();
          const done =
            now.length === 2 &&
            now.every(
              (p) =>
                ready(p) &&
                !p.metadata?.deletionTimestamp &&
                p.spec?.containers[0]?.image === `${localImageRepository}:${tags.changed}` &&
                !firstPods.includes(p.metadata?.name ?? ""),
            );
          return done ? now : undefined;
        },
        180_000,
        1_000,
      );
      console.log(`rolled in ${Date.now() - t0} ms`);
      const names = rolled.map((p) => p.metadata?.name ?? "");
      await eventually("a new pod to lead", async () =>
        names.includes((await leaseHolder()) ?? "") ? true : undefined,
      );
      await new Promise((r) => setTimeout(r, 3_000));
      counts = await prober.stop();
      prober = undefined;
      console.log(
        `login prober across the rollout: attempts=${counts.attempts} successes=${counts.successes} ` +
          `authFailures=${counts.authFailures} otherFailures=${counts.otherFailures} ${counts.failureMessages.join("; ")}`,
      );
      expect(counts.authFailures).toBe(0);
      expect(counts.otherFailures).toBe(0);
      expect(counts.successes).toBe(counts.attempts);
      expect(counts.attempts).toBeGreaterThanOrEqual(Math.floor((Date.now() - t0) / 1_000 / 2));
      expect(isReady(await readOrder(w(), ORDER))).toBe(true);
    }, 420_000);

    it("the target-cluster chart installs with helm --wait; registered, the release's pods deliver an order placed on the target cluster", async () => {
      const t0 = Date.now();
      await installAccess();
      await createControlPlane(
        w().cluster.config,
        w().cpNs,
        w().controlPlane.name,
        [{ namespace: w().tenantNs }, { namespace: edgeNs, targetClusterRef: { name: TARGET } }],
        { publishedMessagingEndpoint: `127.0.0.1:${w().broker.amqpPort}` },
      );
      await applyOrderIn(target, edgeNs, EDGE, edgeSpec(1));
      const order = await waitForOrderIn(target, edgeNs, EDGE, `${EDGE} Ready`, isReady, 120_000);
      console.log(`target-cluster chart installed and ${EDGE} delivered in ${Date.now() - t0} ms`);
      expect(condition(order, "DeliveryReady")?.reason).toBe("Delivered");
      const data = await edgeCredentials();
      expect(data["username"]).toBe(userName(edgeKey, 1));
      expect(await amqpLogin(data["transport_url"] ?? "")).toEqual({ kind: "ok" });
    }, 240_000);

    it("helm uninstall of the target-cluster chart takes its access away and keeps the CRDs, the tenant's namespace, the order and its Secret", async () => {
      const before = await edgeCredentials();
      await helm(["uninstall", access.release, "--wait"], onTarget());
      accessInstalled = false;
      // What the operator reached the target with is gone: the ServiceAccount, its token and the Role.
      const gone = (read: Promise<unknown>) =>
        read.then(
          () => false,
          (error: unknown) => isApiError(error, 404),
        );
      const rbac = target.config.makeApiClient(k8s.RbacAuthorizationV1Api);
      expect(
        await gone(
          target.core.readNamespacedServiceAccount({ namespace: access.namespace, name: "vhost-broker" }),
        ),
      ).toBe(true);
      expect(
        await gone(
          target.core.readNamespacedSecret({ namespace: access.namespace, name: "vhost-broker-token" }),
        ),
      ).toBe(true);
      expect(
        await gone(rbac.readNamespacedRole({ namespace: edgeNs, name: `${access.release}-orders` })),
      ).toBe(true);
      for (const name of ["rabbitmqvhosts.c5c3.io", "mariadbdatabases.c5c3.io"]) {
        const crd = await target.extensions.readCustomResourceDefinition({ name });
        expect(crd.metadata?.deletionTimestamp, name).toBeUndefined();
      }
      const tenant = await target.core.readNamespace({ name: edgeNs });
      expect(tenant.metadata?.deletionTimestamp).toBeUndefined();
      const order = await readOrderIn(target, edgeNs, EDGE);
      expect(isReady(order)).toBe(true);
      expect(order?.metadata?.deletionTimestamp).toBeUndefined();
      expect(await edgeCredentials()).toEqual(before);
      expect(await amqpLogin(before["transport_url"] ?? "")).toEqual({ kind: "ok" });
    }, 180_000);

    it("installed again and registered with its new token, the target-cluster chart lets the pods serve the kept order: a rotation is delivered", async () => {
      const t0 = Date.now();
      await installAccess();
      await applyOrderIn(target, edgeNs, EDGE, edgeSpec(2));
      const data = await eventually(
        "the successor delivered on the target cluster",
        async () => {
          const now = await edgeCredentials();
          return now["username"] === userName(edgeKey, 2) ? now : undefined;
        },
        120_000,
        500,
      );
      console.log(`target-cluster chart installed again and the rotation delivered in ${Date.now() - t0} ms`);
      expect(await amqpLogin(data["transport_url"] ?? "")).toEqual({ kind: "ok" });
      expect(isReady(await readOrderIn(target, edgeNs, EDGE))).toBe(true);
    }, 180_000);

    it("helm uninstall keeps the CRDs, the order, its Secret and its broker user", async () => {
      const before = await readSecret(w(), w().tenantNs, `${ORDER}-credentials`);
      await helm(["uninstall", release, "--wait"]);
      installed = false;
      await eventually(
        "the release's pods to be gone",
        async () => ((await pods()).length === 0 ? true : undefined),
        180_000,
        1_000,
      );
      for (const { name } of adopted) {
        const crd = await w().cluster.extensions.readCustomResourceDefinition({ name });
        expect(crd.metadata?.deletionTimestamp, name).toBeUndefined();
      }
      const order = await readOrder(w(), ORDER);
      expect(isReady(order)).toBe(true);
      expect(order?.metadata?.deletionTimestamp).toBeUndefined();
      expect(await readSecret(w(), w().tenantNs, `${ORDER}-credentials`)).toEqual(before);
      const vhost = vhostName({ cluster: "", namespace: w().tenantNs, name: ORDER });
      expect((await brokerApi(w(), "GET", `/api/vhosts/${encodeURIComponent(vhost)}`)).status).toBe(200);
      expect(await amqpLogin(before["transport_url"] ?? "")).toEqual({ kind: "ok" });
      // Nothing of the release is left in its namespace but the token Secret the test made.
      await expect(
        w()
          .cluster.config.makeApiClient(k8s.AppsV1Api)
          .readNamespacedDeployment({ namespace, name: `${release}-vhost-broker` }),
      ).rejects.toSatisfy((e: unknown) => isApiError(e, 404));
    }, 240_000);
  },
);
