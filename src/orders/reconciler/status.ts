// The order's status: assembled from a pass's conditions, rotation state and delivery, compared with what
// the order holds (written only when it changed), and the events its transitions produce.
import type { RabbitMQVhostStatus } from "../../api/index.ts";
import {
  buildConditions,
  DELIVERY_READY,
  rfc3339,
  sameConditions,
  VHOST_READY,
  type Condition,
  type ConditionState,
} from "../conditions.ts";
import type { RotationStatus } from "../generations.ts";
import { DELIVERED_KEYS } from "../transport-url.ts";
import type { OrderEvent } from "./deps.ts";

/** What a pass found; an absent part keeps the field the order already holds. */
export interface StatusUpdate {
  vhostReady: ConditionState;
  deliveryReady: ConditionState;
  vhost?: string | undefined;
  /** The rotation state after the pass, with the delivered user's name. */
  rotation?: { state: RotationStatus; username: string | undefined } | undefined;
  /** Delivered this pass: host, port and Secret; "none" when delivery ran and the Secret lacks the live user. */
  delivery?: { host: string; port: number; secretName: string } | "none" | undefined;
}

/** The status fields in the order the API reference lists them. */
const FIELDS = [
  "conditions",
  "observedGeneration",
  "vhost",
  "username",
  "host",
  "port",
  "passwordGeneration",
  "lastRotation",
  "nextRotation",
  "previousPasswordGeneration",
  "previousPasswordDeleteAt",
  "secretName",
  "secretKeys",
] as const satisfies readonly (keyof RabbitMQVhostStatus)[];

const time = (t: Date | undefined): string | undefined => (t === undefined ? undefined : rfc3339(t));

export function previousConditions(status: RabbitMQVhostStatus | undefined): Condition[] {
  return (status?.conditions ?? []).map((c) => ({
    type: c.type,
    status: c.status,
    reason: c.reason as Condition["reason"],
    message: c.message,
    observedGeneration: c.observedGeneration ?? 0,
    lastTransitionTime: c.lastTransitionTime,
  }));
}

export function assembleStatus(
  previous: RabbitMQVhostStatus | undefined,
  update: StatusUpdate,
  generation: number,
  now: Date,
): RabbitMQVhostStatus {
  const next: RabbitMQVhostStatus = { ...previous };
  next.conditions = buildConditions({
    vhost: update.vhostReady,
    delivery: update.deliveryReady,
    generation,
    previous: previousConditions(previous),
    now,
  });
  next.observedGeneration = generation;
  if (update.vhost !== undefined) next.vhost = update.vhost;
  if (update.rotation) {
    const r = update.rotation.state;
    next.username = update.rotation.username;
    next.passwordGeneration = r.passwordGeneration;
    next.lastRotation = time(r.lastRotation);
    next.nextRotation = time(r.nextRotation);
    next.previousPasswordGeneration = r.previousPasswordGeneration;
    next.previousPasswordDeleteAt = time(r.previousPasswordDeleteAt);
  }
  if (update.delivery === "none") {
    next.secretName = undefined;
    next.secretKeys = undefined;
  } else if (update.delivery) {
    next.host = update.delivery.host;
    next.port = update.delivery.port;
    next.secretName = update.delivery.secretName;
    next.secretKeys = [...DELIVERED_KEYS];
  }
  return Object.fromEntries(FIELDS.filter((k) => next[k] !== undefined).map((k) => [k, next[k]]));
}

/** True when the status must be written: any field or condition differs (times included). */
export function statusChanged(before: RabbitMQVhostStatus | undefined, after: RabbitMQVhostStatus): boolean {
  const prev = before ?? {};
  const plain = (s: RabbitMQVhostStatus) =>
    JSON.stringify(FIELDS.filter((k) => k !== "conditions").map((k) => s[k] ?? null));
  if (plain(prev) !== plain(after)) return true;
  return !sameConditions(previousConditions(prev), previousConditions(after));
}

/** A merge patch that sets every field of `status` and removes the ones it lacks. */
export function statusPatch(status: RabbitMQVhostStatus): Record<string, unknown> {
  return Object.fromEntries(FIELDS.map((k) => [k, status[k] ?? null]));
}

/**
 * Events for what changed between two statuses: a sub-condition that changed its status or reason, and a
 * switch to a new generation. Messages are condition messages and user names: no secret.
 */
export function transitionEvents(
  before: RabbitMQVhostStatus | undefined,
  after: RabbitMQVhostStatus,
): OrderEvent[] {
  const events: OrderEvent[] = [];
  for (const type of [VHOST_READY, DELIVERY_READY]) {
    const was = before?.conditions?.find((c) => c.type === type);
    const now = after.conditions?.find((c) => c.type === type);
    if (!now || (was && was.status === now.status && was.reason === now.reason)) continue;
    events.push({
      type: now.status === "True" ? "Normal" : "Warning",
      reason: now.reason,
      message: now.message,
    });
  }
  const from = before?.passwordGeneration;
  const to = after.passwordGeneration;
  if (to !== undefined && to !== from) {
    const message =
      from === undefined
        ? `user "${after.username ?? ""}" (generation ${to}) is the delivered user`
        : `rotated from generation ${from} to ${to}: user "${after.username ?? ""}" is the delivered user`;
    events.push({ type: "Normal", reason: from === undefined ? "UserProvisioned" : "Rotated", message });
  }
  return events;
}
