// The sweep of a superseded user waits for evidence beyond live connections, through the operator
// process: a consumer that logged in once with the old credential after the switch and left (the
// broker's login records, tracked on the 4.3 node for this file), and a Deployment whose pods read the
// delivered Secret from before the switch until `kubectl rollout restart` replaces them. And a paused
// order does not act on a raised generation until the annotation goes.
import { execFileSync } from "node:child_process";
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PAUSED_ANNOTATION } from "../src/api/contracts.ts";
import { userName } from "../src/orders/rabbitmq/naming.ts";
import { localNode } from "../harness/world/local-brokers.ts";
import { amqpLogin } from "../harness/probes/login-prober.ts";
import { OperatorProcess } from "../harness/operator/operator-process.ts";
import { WorkloadControllers } from "./support/workload-controllers.ts";
import { eventually } from "../harness/world/kube.ts";
import {
  applyOrder,
  brokerApi,
  condition,
  createWorld,
  destroyWorld,
  isReady,
  readSecret,
  waitForOrder,
  type World,
} from "../harness/world/world.ts";

const HOLD_S = 60;
const GRACE = "5s";
const NODE = localNode("rabbitmq");
const held = (o: Parameters<typeof condition>[0]) => condition(o, "VhostReady")?.message ?? "";

/** Turns the 4.3 node's login records by user on or off (read at every login, no restart). */
function trackLogins(on: boolean): void {
  execFileSync(NODE.rabbitmqctl, ["eval", `application:set_env(rabbit, track_auth_attempt_source, ${on}).`]);
}

describe("the sweep waits for logins since the switch and for pods from before it, operator process", () => {
  let world: World | undefined;
  let operator: OperatorProcess | undefined;
  let controllers: WorkloadControllers | undefined;
  const key = (name: string) => ({ cluster: "", namespace: world?.tenantNs ?? "", name });

  beforeAll(async () => {
    world = await createWorld("sweepev", { broker: NODE.broker });
    operator = await OperatorProcess.start({ args: [`--sweep-hold=${HOLD_S}s`] });
  }, 120_000);

  afterAll(async () => {
    trackLogins(false);
    try {
      await destroyWorld(world);
    } finally {
      await controllers?.stop();
      await operator?.stop();
    }
  }, 120_000);

  /** Raises the order to generation 2 and waits for the switch; the superseded user's transport_url. */
  async function switched(w: World, name: string): Promise<{ oldUrl: string; deleteAt: number }> {
    const oldUrl = (await readSecret(w, w.tenantNs, `${name}-credentials`))["transport_url"] ?? "";
    await applyOrder(w, name, { rotation: { gracePeriod: GRACE }, passwordGeneration: 2 });
    const o = await waitForOrder(
      w,
      name,
      "the switch to generation 2",
      (x) => x?.status?.passwordGeneration === 2,
      60_000,
    );
    return { oldUrl, deleteAt: Date.parse(o?.status?.previousPasswordDeleteAt ?? "") };
  }

  it("keeps a user that logged in after the switch until the hold ends", async () => {
    if (!world) throw new Error("no world");
    const w = world;
    trackLogins(true);
    await applyOrder(w, "cron", { rotation: { gracePeriod: GRACE } });
    await waitForOrder(w, "cron", "generation 1 Ready", isReady, 90_000);
    const { oldUrl, deleteAt } = await switched(w, "cron");
    const baseline = await waitForOrder(
      w,
      "cron",
      "the login records read at the switch",
      (o) => o?.status?.previousPasswordLogins !== undefined,
    );
    expect(baseline?.status?.previousPasswordLogins).toBeGreaterThanOrEqual(0);
    // A job that read the Secret before the switch logs in once with it, then leaves.
    expect(await amqpLogin(oldUrl)).toEqual({ kind: "ok" });

    const holding = await waitForOrder(
      w,
      "cron",
      "the sweep held by the login",
      (o) => held(o).includes("it logged in 1 time since the switch"),
      60_000,
    );
    expect(held(holding)).toContain(
      `the superseded user "${userName(key("cron"), 1)}" is kept past its grace period`,
    );
    await new Promise((r) => setTimeout(r, 10_000));
    expect((await brokerApi(w, "GET", `/api/users/${userName(key("cron"), 1)}`)).status).toBe(200);

    // What the condition said until the sweep, each change once, printed for a failure's reading.
    const said: string[] = [];
    await waitForOrder(
      w,
      "cron",
      "the sweep at the hold's end",
      (o) => {
        const now = `${new Date().toISOString()} logins@switch=${o?.status?.previousPasswordLogins} ${held(o)}`;
        if (said.at(-1)?.slice(25) !== now.slice(25)) said.push(now);
        return o?.status?.previousPasswordGeneration === undefined;
      },
      (HOLD_S + 30) * 1000,
    );
    console.log(said.join("\n"));
    expect(Date.now()).toBeGreaterThanOrEqual(deleteAt + (HOLD_S - 2) * 1000);
    expect((await brokerApi(w, "GET", `/api/users/${userName(key("cron"), 1)}`)).status).toBe(404);
    trackLogins(false);
  }, 240_000);

  it("keeps a user while a Deployment's pods read the Secret from before the switch, until a rollout restart", async () => {
    if (!world) throw new Error("no world");
    const w = world;
    controllers = WorkloadControllers.start();
    await applyOrder(w, "api", { rotation: { gracePeriod: GRACE } });
    await waitForOrder(w, "api", "generation 1 Ready", isReady, 90_000);
    const apps = w.cluster.config.makeApiClient(k8s.AppsV1Api);
    await apps.createNamespacedDeployment({
      namespace: w.tenantNs,
      body: {
        metadata: { name: "api" },
        spec: {
          replicas: 1,
          // The pods never run (no nodes): Recreate replaces them without waiting for them to be Ready.
          strategy: { type: "Recreate" },
          selector: { matchLabels: { app: "api" } },
          template: {
            metadata: { labels: { app: "api" } },
            spec: {
              containers: [
                {
                  name: "api",
                  image: "registry.invalid/api:1",
                  volumeMounts: [{ name: "bus", mountPath: "/etc/bus" }],
                },
              ],
              volumes: [{ name: "bus", secret: { secretName: "api-credentials" } }],
            },
          },
        },
      },
    });
    const pods = async () =>
      (
        await w.cluster.core.listNamespacedPod({ namespace: w.tenantNs, labelSelector: "app=api" })
      ).items.filter((p) => !p.metadata?.deletionTimestamp);
    const first = await eventually("the Deployment's pod", async () =>
      (await pods()).length === 1 ? (await pods())[0] : undefined,
    );
    const { deleteAt } = await switched(w, "api");

    const holding = await waitForOrder(
      w,
      "api",
      "the sweep held by the pod",
      (o) => held(o).includes("started before the switch"),
      60_000,
    );
    expect(held(holding)).toContain(
      `pod ${w.tenantNs}/${first.metadata?.name ?? ""}, started before the switch, reads the delivered Secret`,
    );

    const restartedAt = Date.now();
    await apps.patchNamespacedDeployment(
      {
        namespace: w.tenantNs,
        name: "api",
        body: {
          spec: {
            template: {
              metadata: { annotations: { "kubectl.kubernetes.io/restartedAt": new Date().toISOString() } },
            },
          },
        },
      },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
    await waitForOrder(
      w,
      "api",
      "the sweep after the restart",
      (o) => o?.status?.previousPasswordGeneration === undefined,
      40_000,
    );
    // Swept for the restart, well before the hold's end.
    expect(Date.now()).toBeLessThan(deleteAt + (HOLD_S - 10) * 1000);
    expect(Date.now() - restartedAt).toBeLessThan(30_000);
    const now = await pods();
    expect(now.map((p) => p.metadata?.name)).not.toContain(first.metadata?.name);
  }, 240_000);

  it("does not act on a raised generation while paused, and does once resumed", async () => {
    if (!world) throw new Error("no world");
    const w = world;
    await applyOrder(w, "quiet", { rotation: { gracePeriod: GRACE } });
    await waitForOrder(w, "quiet", "generation 1 Ready", isReady, 90_000);
    const annotate = (value: string | null) =>
      w.custom.patchNamespacedCustomObject(
        {
          group: "c5c3.io",
          version: "v1alpha1",
          plural: "rabbitmqvhosts",
          namespace: w.tenantNs,
          name: "quiet",
          body: { metadata: { annotations: { [PAUSED_ANNOTATION]: value } } },
        },
        k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
      );
    await annotate("true");
    await waitForOrder(w, "quiet", "the pause said", (o) =>
      held(o).includes(`paused by the annotation ${PAUSED_ANNOTATION}`),
    );
    await applyOrder(w, "quiet", { rotation: { gracePeriod: GRACE }, passwordGeneration: 2 });
    await new Promise((r) => setTimeout(r, 8_000));
    const still = await waitForOrder(w, "quiet", "still paused", () => true);
    expect(still?.status?.passwordGeneration).toBe(1);
    expect((await readSecret(w, w.tenantNs, "quiet-credentials"))["username"]).toBe(
      userName(key("quiet"), 1),
    );
    await annotate(null);
    const resumed = await waitForOrder(
      w,
      "quiet",
      "generation 2 delivered",
      (o) => o?.status?.passwordGeneration === 2,
      30_000,
    );
    expect(held(resumed)).not.toContain("paused");
  }, 180_000);
});
