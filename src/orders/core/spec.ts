// The order's spec with its defaults resolved. The kind has no webhook, so the reconciler applies the
// defaults itself for fields an older object or a client that skipped them left empty.
import { parseDuration } from "../../runtime/base/duration.ts";
import type { RotationSpec, RotationStatus } from "./generations.ts";
import type { OrderObject, OrderStatus } from "./kind.ts";

export const DEFAULT_INTERVAL = "720h";
export const DEFAULT_GRACE_PERIOD = "24h";

export interface ResolvedSpec {
  rotation: RotationSpec;
  /** The container child's deletion policy (the Vhost CR's, the Database's): the order's, lower-cased. */
  deletionPolicy: "retain" | "delete";
}

export function resolveSpec(order: Pick<OrderObject, "spec">): ResolvedSpec {
  const interval = parseDuration(order.spec.rotation?.interval ?? DEFAULT_INTERVAL);
  const grace = parseDuration(order.spec.rotation?.gracePeriod ?? DEFAULT_GRACE_PERIOD);
  return {
    rotation: {
      declaredGeneration: Math.max(1, order.spec.passwordGeneration ?? 1),
      // The CRD refuses what does not parse; the default is the fallback for an object that slipped past.
      intervalMs: Math.max(0, interval ?? (parseDuration(DEFAULT_INTERVAL) as number)),
      gracePeriodMs: Math.max(0, grace ?? (parseDuration(DEFAULT_GRACE_PERIOD) as number)),
    },
    deletionPolicy: order.spec.deletionPolicy === "Delete" ? "delete" : "retain",
  };
}

const time = (text: string | undefined): Date | undefined => {
  if (!text) return undefined;
  const t = new Date(text);
  return Number.isNaN(t.getTime()) ? undefined : t;
};

/** The rotation fields of the order's status, as the generation functions read them. */
export function rotationStatusOf(status: OrderStatus | undefined): RotationStatus {
  return {
    passwordGeneration: status?.passwordGeneration || undefined,
    lastRotation: time(status?.lastRotation),
    nextRotation: time(status?.nextRotation),
    previousPasswordGeneration: status?.previousPasswordGeneration || undefined,
    previousPasswordDeleteAt: time(status?.previousPasswordDeleteAt),
    previousPasswordLogins: status?.previousPasswordLogins,
  };
}

/**
 * An order stored under an older CRD may hold `passwordGeneration: 0` or `deletionPolicy: ""`. The kind
 * has no webhook, so these are the defaults the reconciler resolves (1 and Retain), not schema errors:
 * they are dropped before the kind's schema reads the order.
 */
export function withDefaultsResolvable(raw: unknown): unknown {
  const order = raw as { spec?: Record<string, unknown> } | undefined;
  if (!order?.spec) return raw;
  const spec = { ...order.spec };
  if (spec["passwordGeneration"] === 0) delete spec["passwordGeneration"];
  if (spec["deletionPolicy"] === "") delete spec["deletionPolicy"];
  return { ...order, spec };
}
