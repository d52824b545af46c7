// Waits past Node's longest timer (2^31-1 ms, about 24.8 days), through the operator process on the real
// parts. Node runs a longer setTimeout after 1 ms: with drift re-checks off, a converged order waiting
// for its next rotation 720h away passed about every millisecond, and with --orphan-removal-delay=600h
// the leftovers of an order whose finalizer was stripped were removed at once instead of after 600h.
// Here the order passes a handful of times at most in the window and the leftovers stay; last, an
// operator with a short delay removes them, so the world ends clean.
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseMetrics, sum } from "../harness/probes/prometheus.ts";
import { backupPath } from "../src/orders/core/naming.ts";
import { RABBITMQ_NAMING, userName } from "../src/orders/rabbitmq/naming.ts";
import { eventually } from "../harness/world/kube.ts";
import { OperatorProcess } from "../harness/operator/operator-process.ts";
import { openBaoRead } from "../harness/world/order-env.ts";
import {
  applyOrder,
  brokerApi,
  createWorld,
  destroyWorld,
  isReady,
  readOrder,
  waitForOrder,
  type World,
} from "../harness/world/world.ts";

const WINDOW_MS = 15_000;
/** Drift re-checks off: a converged order waits for its next rotation alone. */
const waits = ["--orphan-removal-delay=600h", "--drift-resync-min=0s", "--drift-resync-max=0s"];
/**
 * Passes the order controller may take in the window: a few woken by events (its children's status after
 * a restart), never a loop (thousands in the window before the fix).
 */
const AT_MOST = 60;

describe("waits past 24.8 days, operator process", () => {
  let world: World | undefined;
  let operator: OperatorProcess | undefined;
  const w = (): World => {
    if (!world) throw new Error("no world");
    return world;
  };
  const op = (): OperatorProcess => {
    if (!operator) throw new Error("no operator");
    return operator;
  };
  const passes = async () =>
    sum(
      parseMetrics(await op().metrics(["controller_runtime_reconcile_total"])),
      "controller_runtime_reconcile_total",
      {
        controller: "rabbitmqvhost",
      },
    );
  /** The order passes counted over the window, after the events of what came before have settled. */
  const passesOverWindow = async () => {
    await new Promise((r) => setTimeout(r, 2_000));
    const before = await passes();
    await new Promise((r) => setTimeout(r, WINDOW_MS));
    return (await passes()) - before;
  };
  const ref = (name: string) => ({
    group: "c5c3.io",
    version: "v1alpha1",
    plural: "rabbitmqvhosts",
    namespace: w().tenantNs,
    name,
  });
  const onBroker = async (user: string) =>
    (await brokerApi(w(), "GET", `/api/users/${encodeURIComponent(user)}`)).status === 200;

  /** Killed, not stopped: the operator lock stays with this process for the next one. */
  const restart = async (args: string[]) => {
    await op().kill();
    operator = await OperatorProcess.start({ args });
  };

  beforeAll(async () => {
    world = await createWorld("ltimer");
    operator = await OperatorProcess.start({ args: waits });
    // Long enough to wait for another file's operator to give the operator lock back.
  }, 20 * 60_000);

  afterAll(async () => {
    try {
      await destroyWorld(world);
    } finally {
      await operator?.stop();
    }
  }, 120_000);

  it("waits for a rotation 720h away without passing again", async () => {
    await applyOrder(w(), "steady", { deletionPolicy: "Delete" });
    const ready = await waitForOrder(w(), "steady", "ready", isReady, 90_000);
    expect(Date.parse(ready?.status?.nextRotation ?? "") - Date.now()).toBeGreaterThan(719 * 3_600_000);
    // A new process: no shorter wait of the provisioning (a child's fallback) is pending beside it.
    await restart(waits);
    const counted = await passesOverWindow();
    console.log(`long-timers: "steady" passed ${counted} times in ${WINDOW_MS} ms`);
    expect(counted).toBeLessThanOrEqual(AT_MOST);
    expect(isReady(await readOrder(w(), "steady"))).toBe(true);
    // Gone, so that the next window counts only the absent order's passes.
    await w().custom.deleteNamespacedCustomObject(ref("steady"));
    await eventually("steady torn down", async () => ((await readOrder(w(), "steady")) ? undefined : true));
  }, 150_000);

  it("waits 600h for an absent order's leftovers without passing again, then a short delay removes them", async () => {
    const name = "stripped";
    const key = { cluster: "", namespace: w().tenantNs, name };
    await applyOrder(w(), name, { deletionPolicy: "Delete" });
    await waitForOrder(w(), name, "ready", isReady, 90_000);
    // With no operator running, which would add the finalizer again before the delete.
    await op().kill();
    await w().custom.patchNamespacedCustomObject(
      { ...ref(name), body: { metadata: { finalizers: null } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
    await w().custom.deleteNamespacedCustomObject(ref(name));
    await eventually("the order gone", async () => ((await readOrder(w(), name)) ? undefined : true));
    operator = await OperatorProcess.start({ args: waits });

    const counted = await passesOverWindow();
    console.log(`long-timers: "${name}" (absent) passed ${counted} times in ${WINDOW_MS} ms`);
    expect(counted).toBeLessThanOrEqual(AT_MOST);
    // Still within its delay: the leftovers stay.
    expect(await onBroker(userName(key, 1))).toBe(true);

    await restart(["--orphan-removal-delay=1s"]);
    const path = backupPath(RABBITMQ_NAMING, key, w().cpNs);
    await eventually(
      "the leftovers removed",
      async () => (!(await onBroker(userName(key, 1))) && !(await openBaoRead(path)) ? true : undefined),
      60_000,
    );
  }, 180_000);
});
