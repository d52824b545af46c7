// The Kubernetes port's writes (server-side apply, diff-guarded status through /status) and transition
// events, against a custom resource on the real management cluster.
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeClock } from "../../harness/fakes/fake-clock.ts";
import { EventRecorder } from "../../src/runtime/port/events.ts";
import { RestKube } from "../../src/runtime/port/rest-kube.ts";
import { KubeRest, type Kind, type KubeObject } from "../../src/runtime/port/kube-rest.ts";
import {
  nextStatus,
  type DesiredCondition,
  type StatusWithConditions,
} from "../../src/runtime/base/conditions.ts";
import { freshNamespace, installCrd, testCluster } from "../../harness/world/kube.ts";
import { memoryLogger } from "./support.ts";

const gadgets: Kind = {
  group: "runtime.vhost-broker.test",
  version: "v1",
  plural: "gadgets",
  kind: "Gadget",
  namespaced: true,
};
const conditionSchema = {
  type: "object",
  properties: {
    type: { type: "string" },
    status: { type: "string" },
    reason: { type: "string" },
    message: { type: "string" },
    lastTransitionTime: { type: "string", format: "date-time" },
    observedGeneration: { type: "integer" },
  },
};

const cluster = testCluster("management");
const rest = new KubeRest(cluster.kubeconfig);
const kube = new RestKube(rest);
let ns = "";

/** A reconciler's status write: the conditions merged as `nextStatus` decides, written through the port. */
function writeStatus(
  object: KubeObject,
  desired: { conditions: DesiredCondition[]; [field: string]: unknown },
  clock: FakeClock,
): Promise<boolean> {
  const current = object.status as StatusWithConditions | undefined;
  const { status } = nextStatus(current, desired, object.metadata?.generation, clock.now());
  return kube.patchStatus(gadgets, object, status);
}

beforeAll(async () => {
  await installCrd(cluster, {
    metadata: { name: "gadgets.runtime.vhost-broker.test" },
    spec: {
      group: gadgets.group,
      names: { plural: "gadgets", singular: "gadget", kind: "Gadget", listKind: "GadgetList" },
      scope: "Namespaced",
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: {
              type: "object",
              properties: {
                spec: {
                  type: "object",
                  properties: { size: { type: "integer" }, colour: { type: "string" } },
                },
                status: {
                  type: "object",
                  properties: {
                    observedGeneration: { type: "integer" },
                    phase: { type: "string" },
                    conditions: { type: "array", items: conditionSchema },
                  },
                },
              },
            },
          },
        },
      ],
    },
  });
  ns = await freshNamespace(cluster, "writes");
});

afterAll(async () => {
  await cluster.core.deleteNamespace({ name: ns }).catch(() => undefined);
});

describe("writes", () => {
  it("applies with the vhost-broker field manager, forcing over another manager", async () => {
    const other = {
      apiVersion: `${gadgets.group}/v1`,
      kind: "Gadget",
      metadata: { name: "g1", namespace: ns },
      spec: { colour: "red" },
    };
    await cluster.objects.patch(
      other,
      undefined,
      undefined,
      "someone-else",
      false,
      k8s.PatchStrategy.ServerSideApply,
    );
    const applied = await kube.apply(gadgets, {
      metadata: { name: "g1", namespace: ns },
      spec: { colour: "blue", size: 1 },
    });
    expect(applied.spec).toEqual({ colour: "blue", size: 1 });
    const managers = applied.metadata?.managedFields?.map((f) => f.manager);
    expect(managers).toContain("vhost-broker");
  });

  it("writes status only when it changed, keeping lastTransitionTime and setting observedGeneration", async () => {
    const clock = new FakeClock(Date.parse("2026-05-01T12:00:00Z"));
    const get = async () => (await kube.get(gadgets, { namespace: ns, name: "g1" }, { live: true }))!;
    const ready = { type: "Ready", status: "True" as const, reason: "Available", message: "ok" };

    expect(await writeStatus(await get(), { phase: "Ready", conditions: [ready] }, clock)).toBe(true);
    const stored = await get();
    const status = stored.status as StatusWithConditions;
    expect(status.observedGeneration).toBe(stored.metadata?.generation);
    expect(status.conditions?.[0]).toMatchObject({ ...ready, lastTransitionTime: "2026-05-01T12:00:00Z" });
    const statusManagers = stored.metadata?.managedFields?.filter((f) => f.subresource === "status");
    expect(statusManagers?.map((f) => f.manager)).toEqual(["vhost-broker"]);

    clock.advance(3_600_000);
    expect(await writeStatus(stored, { phase: "Ready", conditions: [ready] }, clock)).toBe(false);
    expect((await get()).metadata?.resourceVersion).toBe(stored.metadata?.resourceVersion);

    const reworded = { phase: "Ready", conditions: [{ ...ready, message: "still ok" }] };
    expect(await writeStatus(stored, reworded, clock)).toBe(true);
    const after = (await get()).status as StatusWithConditions;
    expect(after.conditions?.[0]).toMatchObject({
      message: "still ok",
      lastTransitionTime: "2026-05-01T12:00:00Z",
    });

    // A spec change bumps the generation; the next status write carries it.
    await kube.apply(gadgets, { metadata: { name: "g1", namespace: ns }, spec: { colour: "blue", size: 2 } });
    const bumped = await get();
    expect(await writeStatus(bumped, reworded, clock)).toBe(true);
    expect(((await get()).status as StatusWithConditions).observedGeneration).toBe(
      bumped.metadata?.generation,
    );
  });

  it("adds and removes a finalizer under the vhost-broker field manager", async () => {
    const ref = { namespace: ns, name: "g1" };
    const finalizer = "runtime.vhost-broker.test/cleanup";
    expect(
      await kube.ensureFinalizer(gadgets, (await kube.get(gadgets, ref, { live: true }))!, finalizer),
    ).toBe(true);
    const held = (await kube.get(gadgets, ref, { live: true }))!;
    expect(held.metadata?.finalizers).toEqual([finalizer]);
    const owner = held.metadata?.managedFields?.find((f) =>
      JSON.stringify(f.fieldsV1).includes("f:finalizers"),
    );
    expect(owner?.manager).toBe("vhost-broker");
    expect(await kube.ensureFinalizer(gadgets, held, finalizer)).toBe(false);
    await kube.removeFinalizer(gadgets, held, finalizer);
    expect((await kube.get(gadgets, ref, { live: true }))!.metadata?.finalizers).toBeUndefined();
  });

  it("records an events.k8s.io/v1 Event per condition transition, none when nothing changed", async () => {
    const { log } = memoryLogger();
    const recorder = new EventRecorder({
      controller: "vhost-broker",
      instance: "itest",
      clock: new FakeClock(),
      log,
    });
    const object = await rest.request<KubeObject>(
      "GET",
      `/apis/${gadgets.group}/v1/namespaces/${ns}/gadgets/g1`,
    );
    const before = (object.status as StatusWithConditions).conditions;
    const unchanged = before!.map(({ type, status, reason, message }) => ({ type, status, reason, message }));
    expect(await recorder.recordTransitions(rest, gadgets, object, before, unchanged)).toBe(0);
    const failing = [
      {
        type: "Ready",
        status: "False" as const,
        reason: "BrokerDown",
        message: "amqp://u:hunter2@broker:5672 refused",
      },
    ];
    expect(await recorder.recordTransitions(rest, gadgets, object, before, failing)).toBe(1);
    const events = cluster.config.makeApiClient(k8s.EventsV1Api);
    // Events are written synchronously by recordTransitions, so the list already holds it.
    const list = await events.listNamespacedEvent({ namespace: ns });
    expect(list.items).toHaveLength(1);
    const [event] = list.items;
    expect(event).toMatchObject({
      type: "Warning",
      reason: "BrokerDown",
      action: "Ready",
      reportingController: "vhost-broker",
    });
    expect(event?.regarding).toMatchObject({ kind: "Gadget", name: "g1", uid: object.metadata?.uid });
    expect(event?.note).not.toContain("hunter2");
  });
});
