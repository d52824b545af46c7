// The RabbitMQVhost order in the whole-pass tests' world (../pass-world.ts): its ControlPlane,
// RabbitmqCluster and order, one pass of it, the topology operator's part between passes, and what the
// tests read of the order and its delivered Secret.
import {
  permissionKind,
  rabbitMQVhostKind,
  secretKind,
  userKind,
  vhostKind,
} from "../../../src/api/index.ts";
import { putManagedBus } from "../../../harness/fakes/managed-bus.ts";
import { topologyFinalizer } from "../../../src/rabbitmq/finalizer.ts";
import { reconcileOrder } from "../../../src/orders/core/reconcile.ts";
import { rabbitMQVhostOrder } from "../../../src/orders/rabbitmq/kind.ts";
import { TransientError } from "../../../src/runtime/base/errors.ts";
import { CP_NS, TENANT, clock, deps, freshWorld, kube, putOrder, requeues, unb64 } from "../pass-world.ts";

export const NAME = "workflow";

/**
 * A fresh world (before each test); the broker's refusal of a successor's login names no user. The
 * children's topology finalizer is released by their delete, as the topology controller, which this
 * world does not run, releases it.
 */
export function setUp(): void {
  freshWorld(() => "the broker refused a login (test)");
  kube.releaseOnDelete(...[vhostKind, userKind, permissionKind].map(topologyFinalizer));
}

export function world(spec: Record<string, unknown> = {}) {
  putManagedBus(kube, CP_NS, TENANT);
  putOrder(rabbitMQVhostKind, NAME, spec);
}

export async function pass(): Promise<{ requeueAfterMs?: number | undefined; error?: string }> {
  try {
    const result = await reconcileOrder(rabbitMQVhostOrder(), deps, "", TENANT, NAME);
    if (result.requeueAfterMs !== undefined) requeues.push(result.requeueAfterMs);
    return result;
  } catch (error) {
    if (!(error instanceof TransientError)) throw error;
    return { error: error.message };
  }
}

/** The topology operator's part: every Vhost, User and Permission reported Ready for its generation. */
export function topology(): void {
  for (const kind of [vhostKind, userKind, permissionKind]) {
    for (const object of kube.all(kind)) {
      if (object.metadata?.deletionTimestamp) continue;
      kube.put(kind, {
        ...object,
        status: {
          observedGeneration: object.metadata?.generation ?? 1,
          conditions: [{ type: "Ready", status: "True", reason: "SuccessfulCreateOrUpdate" }],
        },
      });
    }
  }
}

export const order = () => kube.read(rabbitMQVhostKind, TENANT, NAME);
export const condition = (type: string) =>
  (
    order()?.status as { conditions?: { type: string; status: string; reason: string; message: string }[] }
  )?.conditions?.find((c) => c.type === type);
export const status = () => (order()?.status ?? {}) as Record<string, unknown>;
export const delivered = () => kube.read(secretKind, TENANT, `${NAME}-credentials`);
export const deliveredUser = () =>
  unb64((delivered()?.["data"] as Record<string, string> | undefined)?.["username"]);

/** The schedule's rotation due, and passes until its successor's User and Permission are Ready. */
export async function rotationReady(): Promise<void> {
  clock.advance(180_000);
  await pass();
  topology();
  await pass();
  topology();
}

/** Passes with the topology operator's part between them, until the order is Ready. */
export async function converge(): Promise<{ requeueAfterMs?: number | undefined }> {
  for (let i = 0; i < 10; i++) {
    const result = await pass();
    topology();
    if (condition("Ready")?.status === "True") return result;
  }
  throw new Error(`did not converge: ${JSON.stringify(status()["conditions"])}`);
}
