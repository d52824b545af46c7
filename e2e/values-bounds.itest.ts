// Values the reconciler cannot hold, through the operator process on the real parts. The CRD bounds
// spec.passwordGeneration at 10^15, so the API server refuses a nanosecond timestamp; an order stored
// before that bound (written here under a copy of the CRD without it, which is then tightened again)
// is one the operator's schema refuses: it says so in Ready and Stalled and rotates nothing, and its
// deletion still tears it down under the deletion policy its spec names (the namespace can go).
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installCrds } from "../harness/world/managed-bus.ts";
import { backupPath } from "../src/orders/core/naming.ts";
import { RABBITMQ_NAMING, userName, vhostName } from "../src/orders/rabbitmq/naming.ts";
import { eventually, isApiError } from "../harness/world/kube.ts";
import { OperatorProcess } from "../harness/operator/operator-process.ts";
import { openBaoRead } from "../harness/world/order-env.ts";
import {
  applyOrder,
  brokerApi,
  condition,
  createWorld,
  destroyWorld,
  isReady,
  orderChildren,
  readOrder,
  readSecret,
  waitForOrder,
  type World,
} from "../harness/world/world.ts";

const CRD = "rabbitmqvhosts.c5c3.io";
/** `date +%s%N` on the day of the run: above 2^53. */
const NANOSECONDS = 1733000000000000000;
const LARGEST_SAFE = Number.MAX_SAFE_INTEGER;

describe("values the reconciler cannot hold, operator process", () => {
  let world: World | undefined;
  let operator: OperatorProcess | undefined;
  const w = (): World => {
    if (!world) throw new Error("no world");
    return world;
  };
  const extensions = () => w().cluster.config.makeApiClient(k8s.ApiextensionsV1Api);
  const key = (name: string) => ({ cluster: "", namespace: w().tenantNs, name });
  const ref = (name: string) => ({
    group: "c5c3.io",
    version: "v1alpha1",
    plural: "rabbitmqvhosts",
    namespace: w().tenantNs,
    name,
  });
  const onBroker = async (path: string) => (await brokerApi(w(), "GET", path)).status === 200;
  const raise = (name: string, passwordGeneration: number, dryRun?: boolean) =>
    w().custom.patchNamespacedCustomObject(
      { ...ref(name), body: { spec: { passwordGeneration } }, ...(dryRun ? { dryRun: "All" } : {}) },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );

  /**
   * Stores `passwordGeneration` on the order as an API server without the CRD's bound would have: the
   * bound is taken out for the write and put back (as installed), and the write is refused again after.
   */
  const storePastBound = async (name: string, passwordGeneration: number) => {
    const crd = await extensions().readCustomResourceDefinition({ name: CRD });
    for (const version of crd.spec.versions) {
      const field = version.schema?.openAPIV3Schema?.properties?.["spec"]?.properties?.["passwordGeneration"];
      if (field) delete field.maximum;
    }
    await extensions().replaceCustomResourceDefinition({ name: CRD, body: crd });
    try {
      // The API server takes up a changed schema within moments.
      await eventually("the write past the bound taken", async () => {
        try {
          await raise(name, passwordGeneration);
          return true;
        } catch (error) {
          if (isApiError(error, 422)) return undefined;
          throw error;
        }
      });
    } finally {
      await installCrds(w().cluster.config);
    }
    await eventually("the bound back", async () => {
      try {
        await raise(name, 2e15, true);
        return undefined;
      } catch (error) {
        return isApiError(error, 422) ? true : undefined;
      }
    });
  };

  beforeAll(async () => {
    world = await createWorld("bounds");
    operator = await OperatorProcess.start();
    // Long enough to wait for another file's operator to give the operator lock back.
  }, 20 * 60_000);

  afterAll(async () => {
    try {
      await installCrds(w().cluster.config);
      await destroyWorld(world);
    } finally {
      await operator?.stop();
    }
  }, 120_000);

  it("refuses a passwordGeneration above 10^15 at the API server, and takes 10^15", async () => {
    await applyOrder(w(), "bounded", {});
    await waitForOrder(w(), "bounded", "ready", isReady, 90_000);
    for (const g of [NANOSECONDS, LARGEST_SAFE, 1e15 + 1]) {
      const refused = await raise("bounded", g, true).then(
        () => false,
        (error: unknown) => isApiError(error, 422),
      );
      expect(refused, `passwordGeneration ${g} refused`).toBe(true);
    }
    await raise("bounded", 1e15, true);
  }, 120_000);

  it("stalls an order stored with 2^53-1 with a condition that says why, and rotates nothing", async () => {
    const name = "edge";
    await applyOrder(w(), name, { deletionPolicy: "Delete" });
    await waitForOrder(w(), name, "generation 1", (o) => isReady(o), 90_000);
    await storePastBound(name, LARGEST_SAFE);
    const stalled = await waitForOrder(
      w(),
      name,
      "Ready InvalidObject",
      (o) => condition(o, "Ready")?.reason === "InvalidObject",
      30_000,
    );
    expect(condition(stalled, "Ready")?.message).toMatch(/spec\.passwordGeneration/);
    expect(condition(stalled, "Stalled")).toMatchObject({ status: "True", reason: "InvalidObject" });
    expect(stalled?.status?.passwordGeneration).toBe(1);
    expect((await readSecret(w(), w().tenantNs, `${name}-credentials`))["username"]).toBe(
      userName(key(name), 1),
    );
    expect(await onBroker(`/api/users/${encodeURIComponent(userName(key(name), LARGEST_SAFE))}`)).toBe(false);
    expect(operator?.logs()).not.toMatch(/RangeError/);
  }, 180_000);

  it("tears down an order stored with a nanosecond timestamp, under the policy its spec names", async () => {
    const name = "nanos";
    await applyOrder(w(), name, { deletionPolicy: "Delete" });
    await waitForOrder(w(), name, "generation 1", (o) => isReady(o), 90_000);
    await storePastBound(name, NANOSECONDS);
    expect((await readOrder(w(), name))?.spec.passwordGeneration).toBe(NANOSECONDS);

    await w().custom.deleteNamespacedCustomObject(ref(name));
    await eventually(
      "the order torn down",
      async () => ((await readOrder(w(), name)) ? undefined : true),
      60_000,
    );
    // Delete: the vhost went with the users, the password Secrets and the backup.
    const vhost = vhostName(key(name));
    expect(await onBroker(`/api/vhosts/${encodeURIComponent(vhost)}`)).toBe(false);
    expect(await onBroker(`/api/users/${encodeURIComponent(userName(key(name), 1))}`)).toBe(false);
    expect(await orderChildren(w(), name, "users")).toEqual([]);
    expect(await openBaoRead(backupPath(RABBITMQ_NAMING, key(name), w().cpNs))).toBeUndefined();
  }, 180_000);
});
