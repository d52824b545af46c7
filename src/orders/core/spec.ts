// The order's spec with its defaults resolved. The kind has no webhook, so the reconciler applies the
// defaults itself for fields an older object or a client that skipped them left empty.
import { parseDuration } from "../../runtime/base/duration.ts";
import type { RotationSpec, RotationStatus } from "./generations.ts";
import { windowProblems, type RotationWindow } from "./generations/window.ts";
import type { OrderObject, OrderSpec, OrderStatus } from "./kind.ts";

export const DEFAULT_INTERVAL = "720h";
export const DEFAULT_GRACE_PERIOD = "24h";

export interface ResolvedSpec {
  rotation: RotationSpec;
  /** The container child's deletion policy (the Vhost CR's, the Database's): the order's, lower-cased. */
  deletionPolicy: "retain" | "delete";
}

export const DEFAULT_WINDOW_TIME_ZONE = "UTC";

/** `metadata` gives the rotation window's seed: the uid (namespace/name for an object that has none yet). */
export function resolveSpec(order: Pick<OrderObject, "spec" | "metadata">): ResolvedSpec {
  const interval = parseDuration(order.spec.rotation?.interval ?? DEFAULT_INTERVAL);
  const grace = parseDuration(order.spec.rotation?.gracePeriod ?? DEFAULT_GRACE_PERIOD);
  const window = windowOf(order.spec);
  const { uid, namespace, name } = order.metadata;
  return {
    rotation: {
      declaredGeneration: Math.max(1, order.spec.passwordGeneration ?? 1),
      // The CRD refuses what does not parse; the default is the fallback for an object that slipped past.
      intervalMs: Math.max(0, interval ?? (parseDuration(DEFAULT_INTERVAL) as number)),
      gracePeriodMs: Math.max(0, grace ?? (parseDuration(DEFAULT_GRACE_PERIOD) as number)),
      ...(window ? { window, seed: uid ?? `${namespace ?? ""}/${name ?? ""}` } : {}),
    },
    deletionPolicy: order.spec.deletionPolicy === "Delete" ? "delete" : "retain",
  };
}

/** rotation.window resolved; parseOrder (windowIssues) has refused an order whose window is unusable. */
function windowOf(spec: OrderSpec): RotationWindow | undefined {
  const window = spec.rotation?.window;
  const durationMs = window ? parseDuration(window.duration) : undefined;
  if (!window || durationMs === undefined) return undefined;
  return { schedule: window.schedule, timeZone: window.timeZone ?? DEFAULT_WINDOW_TIME_ZONE, durationMs };
}

/**
 * What the CRD's rules cannot refuse in rotation.window (an unknown time zone, a schedule the cron library
 * refuses or that never matches), as schema issues: the order stalls with InvalidObject like any other
 * field its schema refuses.
 */
export function windowIssues(spec: OrderSpec | undefined): { path: string; message: string }[] {
  const window = spec?.rotation?.window;
  if (!window) return [];
  return windowProblems(window).map((p) => ({ path: `spec.rotation.window.${p.field}`, message: p.message }));
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
    previousPasswordLoginsSince: status?.previousPasswordLoginsSince,
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
