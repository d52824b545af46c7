// The order's spec with its defaults resolved. The kind has no webhook, so the reconciler applies the
// defaults itself for fields an older object or a client that skipped them left empty.
import type { RotationSpec, RotationStatus } from "./generations.ts";
import type { OrderObject, OrderStatus } from "./kind.ts";

export const DEFAULT_INTERVAL = "720h";
export const DEFAULT_GRACE_PERIOD = "24h";

const units: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};
const part = /([0-9]*(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h)/y;

/** A Go duration (`1h30m`, `0s`, `90s`, `1.5h`) in whole milliseconds; undefined when it does not parse. */
export function parseDuration(text: string): number | undefined {
  let rest = text;
  let sign = 1;
  if (rest.startsWith("-") || rest.startsWith("+")) {
    sign = rest.startsWith("-") ? -1 : 1;
    rest = rest.slice(1);
  }
  if (rest === "0") return 0;
  if (rest === "") return undefined;
  let total = 0;
  part.lastIndex = 0;
  while (part.lastIndex < rest.length) {
    const start = part.lastIndex;
    const m = part.exec(rest);
    if (!m || m.index !== start || m[1] === "" || m[1] === ".") return undefined;
    total += Number(m[1]) * (units[m[2] ?? ""] ?? NaN);
  }
  return Number.isFinite(total) ? sign * Math.round(total) : undefined;
}

export interface ResolvedSpec {
  rotation: RotationSpec;
  /** The container child's deletionPolicy (the Vhost CR's): the order's, lower-cased. */
  vhostDeletionPolicy: "retain" | "delete";
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
    vhostDeletionPolicy: order.spec.deletionPolicy === "Delete" ? "delete" : "retain",
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
  };
}
