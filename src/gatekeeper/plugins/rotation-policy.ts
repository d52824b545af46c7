// rotation-policy (mutating, default group): a platform's bounds on an order's rotation schedule, for
// both order kinds (RabbitMQVhost, MariaDBDatabase), whose schedules read alike. At
// entry it clamps spec.rotation.interval and gracePeriod into the bounds for the pass (the order keeps
// what its tenant wrote); at exit it says so in a RotationPolicyApplied condition, and takes that
// condition away once the order's own schedule is within the bounds. Bounds, Go durations, from:
//   VHOST_BROKER_ROTATION_POLICY_MIN_INTERVAL, VHOST_BROKER_ROTATION_POLICY_MAX_INTERVAL,
//   VHOST_BROKER_ROTATION_POLICY_MIN_GRACE_PERIOD, VHOST_BROKER_ROTATION_POLICY_MAX_GRACE_PERIOD.
// An unset bound does not bind: with none set the plugin changes nothing.
import type { RabbitMQVhostStatus } from "../../api/index.ts";
import { parseDuration } from "../../runtime/base/duration.ts";
import { conditionTime } from "../../runtime/base/conditions.ts";
import {
  GATEKEEPER_API_VERSION,
  type DeepReadonly,
  type GatekeeperPlugin,
  type MutatingPlugin,
} from "../api.ts";

export const CONDITION = "RotationPolicyApplied";
/** The CRD's defaults, for an order that leaves the fields out. */
const DEFAULTS = { interval: "720h", gracePeriod: "24h" };

interface Bounds {
  minInterval?: number | undefined;
  maxInterval?: number | undefined;
  minGrace?: number | undefined;
  maxGrace?: number | undefined;
}

export function boundsFrom(env: Readonly<Record<string, string | undefined>>): Bounds {
  const read = (suffix: string): number | undefined => {
    const name = `VHOST_BROKER_ROTATION_POLICY_${suffix}`;
    const text = env[name];
    if (text === undefined || text === "") return undefined;
    const ms = parseDuration(text);
    if (ms === undefined || ms < 0)
      throw new Error(`${name}="${text}" is not a duration like 20s, 90m or 24h`);
    return ms;
  };
  const bounds = {
    minInterval: read("MIN_INTERVAL"),
    maxInterval: read("MAX_INTERVAL"),
    minGrace: read("MIN_GRACE_PERIOD"),
    maxGrace: read("MAX_GRACE_PERIOD"),
  };
  if ((bounds.minInterval ?? 0) > (bounds.maxInterval ?? Infinity))
    throw new Error("the minimum interval exceeds the maximum");
  if ((bounds.minGrace ?? 0) > (bounds.maxGrace ?? Infinity))
    throw new Error("the minimum grace period exceeds the maximum");
  return bounds;
}

const clamp = (ms: number, min: number | undefined, max: number | undefined) =>
  Math.min(max ?? Infinity, Math.max(min ?? 0, ms));

/** A duration as the CRD writes it: whole hours, minutes or seconds where they fit, else milliseconds. */
export function formatDuration(ms: number): string {
  for (const [unit, size] of [
    ["h", 3_600_000],
    ["m", 60_000],
    ["s", 1000],
  ] as const)
    if (ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

/** The schedule the pass uses, and what changed; nothing changed when `changes` is empty. */
export function applyPolicy(
  rotation: { interval?: string | undefined; gracePeriod?: string | undefined } | undefined,
  bounds: Bounds,
): { interval: string; gracePeriod: string; changes: string[] } {
  const interval = rotation?.interval ?? DEFAULTS.interval;
  const gracePeriod = rotation?.gracePeriod ?? DEFAULTS.gracePeriod;
  const changes: string[] = [];
  let outInterval = interval;
  let outGrace = gracePeriod;
  const intervalMs = parseDuration(interval);
  // 0s switches the schedule off: never rotating is longer than any maximum.
  if (intervalMs !== undefined) {
    const wanted =
      intervalMs === 0 && bounds.maxInterval === undefined ? 0 : intervalMs === 0 ? Infinity : intervalMs;
    const clamped = wanted === 0 ? 0 : clamp(wanted, bounds.minInterval, bounds.maxInterval);
    if (clamped !== wanted) {
      outInterval = formatDuration(clamped);
      changes.push(`interval ${interval} is ${outInterval}`);
    }
  }
  const graceMs = parseDuration(gracePeriod);
  if (graceMs !== undefined) {
    const clamped = clamp(graceMs, bounds.minGrace, bounds.maxGrace);
    if (clamped !== graceMs) {
      outGrace = formatDuration(clamped);
      changes.push(`gracePeriod ${gracePeriod} is ${outGrace}`);
    }
  }
  return { interval: outInterval, gracePeriod: outGrace, changes };
}

/** The condition shape both order kinds share. */
type Condition = NonNullable<RabbitMQVhostStatus["conditions"]>[number];
type Order = DeepReadonly<{
  metadata: { generation?: number | undefined };
  status?: { conditions?: Condition[] | undefined } | undefined;
}>;

/** The exit's status: the policy's condition set (keeping its time while it says the same) or taken off. */
export function withPolicyCondition<S extends { conditions?: Condition[] | undefined }>(
  order: Order,
  status: S,
  changes: readonly string[],
  now: number,
): S {
  const held = status.conditions?.some((c) => c.type === CONDITION) ?? false;
  if (changes.length === 0 && !held) return status;
  const others = (status.conditions ?? []).filter((c) => c.type !== CONDITION);
  if (changes.length === 0) return { ...status, conditions: others };
  const message = `the platform's rotation policy applies to this order: ${changes.join("; ")}`;
  const before = order.status?.conditions?.find((c) => c.type === CONDITION);
  const condition: Condition = {
    type: CONDITION,
    status: "True",
    reason: "Clamped",
    message,
    observedGeneration: order.metadata.generation ?? 0,
    lastTransitionTime: before?.status === "True" ? before.lastTransitionTime : conditionTime(now),
  };
  return { ...status, conditions: [...others, condition] };
}

let bounds: Bounds = {};

const plugin: GatekeeperPlugin = {
  apiVersion: GATEKEEPER_API_VERSION,
  name: "rotation-policy",
  configure(context) {
    bounds = boundsFrom(context.env);
    context.log.info({ bounds }, "rotation policy bounds (milliseconds; unset = unbounded)");
  },
  mutating: { RabbitMQVhost: clamping(), MariaDBDatabase: clamping() },
};

type Rotation = { interval?: string | undefined; gracePeriod?: string | undefined } | undefined;

/** The hooks of one order kind: its schedule in the bounds for the pass, and the condition at exit. */
function clamping<
  O extends { metadata: { generation?: number | undefined }; spec: { rotation?: Rotation } },
  S extends { conditions?: Condition[] | undefined },
>(): MutatingPlugin<O, S> {
  return {
    entry(_context, order) {
      const { interval, gracePeriod, changes } = applyPolicy(order.spec.rotation, bounds);
      if (changes.length === 0) return order;
      return { ...order, spec: { ...order.spec, rotation: { interval, gracePeriod } } };
    },
    exit(context, order, status) {
      const { changes } = applyPolicy(order.spec.rotation, bounds);
      return withPolicyCondition(order, status, changes, context.clock.now());
    },
  };
}

export default plugin;
