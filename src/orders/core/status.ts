// The order's status: assembled from a pass's conditions, rotation state and delivery (fields in the
// order the API reference lists them), compared with what the order holds, and the events its
// transitions produce. The port writes it once per pass, only when it changed.
import { mergeConditions } from "../../runtime/base/conditions.ts";
import {
  aggregateReady,
  DELIVERY_READY,
  notOk,
  orderConditions,
  READY,
  rfc3339,
  sameConditions,
  type Condition,
} from "./conditions.ts";
import { orderHealth } from "./health.ts";
import { SWEEP_HELD_MARK, type RotationStatus } from "./generations.ts";
import type { OrderStatus } from "./kind.ts";
import { migrationEvents, type Migration, type Placement } from "./migration.ts";
import type { OrderEvent } from "./deps.ts";
import type { ConditionState, EventTypes } from "./types.ts";

const migrationIn = (status: OrderStatus | undefined): Migration | undefined =>
  status?.["migration"] as Migration | undefined;

/** What a kind's status holds besides the common fields: its resource condition and field, its keys. */
export interface StatusShape {
  resourceCondition: string;
  resourceStatusField: string;
  deliveredKeys: readonly string[];
  allReady: string;
  /** How Events name a backend object: "RabbitmqCluster". */
  backendKind: string;
  /** Whether the kind's backend can keep login records by user (a rotation's Event says when they were not read). */
  loginRecords?: boolean | undefined;
  /** The kind's reasons whose False transition is not a Warning (see eventTypeOf). */
  eventTypes?: EventTypes | undefined;
}

/** The core's reasons that are not Warnings: a wait, or an outage that clears on its own (seed 004). */
const coreEventTypes: EventTypes = {
  WaitingForPassword: "Normal",
  Paused: "Normal",
  SecretStoreNotReady: "none",
  BackupNotSynced: "none",
  DeliveryError: "none",
};

/** Seed 004's table: Normal for progress and waits, Warning for failures, none for transient ones. */
function eventTypeOf(shape: StatusShape, condition: { status: string; reason: string }) {
  if (condition.status === "True") return "Normal";
  return shape.eventTypes?.[condition.reason] ?? coreEventTypes[condition.reason] ?? "Warning";
}

/** What a pass found; an absent part keeps the field the order already holds. */
export interface StatusUpdate {
  resource: ConditionState;
  delivery: ConditionState;
  /** Replaces the aggregate Ready (a gatekeeper plugin's rejection). */
  ready?: ConditionState | undefined;
  /** The resource on the backend (status.vhost, status.database). */
  resourceName?: string | undefined;
  /** The rotation state after the pass, with the delivered user's name. */
  rotation?: { state: RotationStatus; username: string | undefined } | undefined;
  /** Delivered this pass: host, port and Secret; "none" when delivery ran and the Secret lacks the live user. */
  delivered?: { host: string; port: number; secretName: string; secretKeys?: string[] } | "none" | undefined;
  /** Where the order is: status.backend and status.migration (migration.ts). */
  placement?: Placement | undefined;
}

/** The status fields in the order the API reference lists them; the kind's field comes third. */
function fieldsOf(shape: StatusShape): string[] {
  return [
    "conditions",
    "observedGeneration",
    shape.resourceStatusField,
    "username",
    "host",
    "port",
    "backend",
    "passwordGeneration",
    "lastRotation",
    "nextRotation",
    "previousPasswordGeneration",
    "previousPasswordDeleteAt",
    "previousPasswordLogins",
    "previousPasswordLoginsSince",
    "migration",
    "secretName",
    "secretKeys",
  ];
}

const time = (t: Date | undefined): string | undefined => (t === undefined ? undefined : rfc3339(t));

export function previousConditions(status: OrderStatus | undefined): Condition[] {
  return (status?.conditions ?? []).map((c) => ({
    type: c.type,
    status: c.status as Condition["status"],
    reason: c.reason,
    message: c.message,
    observedGeneration: c.observedGeneration ?? 0,
    lastTransitionTime: c.lastTransitionTime,
  }));
}

/**
 * The status a pass writes. `declaredGeneration` is the order's spec.passwordGeneration: a delivered
 * generation below it is a rotation under way (Reconciling, see health.ts).
 */
export function assembleStatus(
  shape: StatusShape,
  previous: OrderStatus | undefined,
  update: StatusUpdate,
  generation: number,
  now: Date,
  declaredGeneration?: number,
): OrderStatus {
  const next: OrderStatus = { ...previous };
  const ready =
    update.ready ??
    aggregateReady(
      { type: shape.resourceCondition, state: update.resource },
      update.delivery,
      shape.allReady,
    );
  const health = orderHealth({
    conditions: [
      { type: shape.resourceCondition, state: update.resource },
      { type: DELIVERY_READY, state: update.delivery },
      ...(update.ready ? [{ type: "Ready", state: update.ready }] : []),
    ],
    ready,
    needsPerson: (reason) => eventTypeOf(shape, { status: "False", reason }) === "Warning",
    declaredGeneration,
    deliveredGeneration: update.rotation?.state.passwordGeneration ?? previous?.passwordGeneration,
  });
  next.conditions = orderConditions({
    resourceType: shape.resourceCondition,
    resource: update.resource,
    delivery: update.delivery,
    ready,
    health,
    allReady: shape.allReady,
    generation,
    previous: previousConditions(previous),
    now,
  });
  next.observedGeneration = generation;
  if (update.resourceName !== undefined) next[shape.resourceStatusField] = update.resourceName;
  if (update.rotation) {
    const r = update.rotation.state;
    next.username = update.rotation.username;
    next.passwordGeneration = r.passwordGeneration;
    next.lastRotation = time(r.lastRotation);
    next.nextRotation = time(r.nextRotation);
    next.previousPasswordGeneration = r.previousPasswordGeneration;
    next.previousPasswordDeleteAt = time(r.previousPasswordDeleteAt);
    next.previousPasswordLogins = r.previousPasswordLogins;
    next.previousPasswordLoginsSince = r.previousPasswordLoginsSince;
  }
  if (update.placement) {
    next["backend"] = update.placement.backend ?? next["backend"];
    next["migration"] = update.placement.migration;
  }
  if (update.delivered === "none") {
    next.secretName = undefined;
    next.secretKeys = undefined;
  } else if (update.delivered) {
    next.host = update.delivered.host;
    next.port = update.delivered.port;
    next.secretName = update.delivered.secretName;
    next.secretKeys = [...(update.delivered.secretKeys ?? shape.deliveredKeys)];
  }
  return Object.fromEntries(
    fieldsOf(shape)
      .filter((k) => next[k] !== undefined)
      .map((k) => [k, next[k]]),
  ) as OrderStatus;
}

/**
 * The status of a teardown that holds the finalizer: Ready says why; the other conditions and fields keep
 * what they said.
 */
export function holdingStatus(
  order: { metadata: { generation?: number | undefined }; status?: OrderStatus | undefined },
  why: { reason: string; message: string },
  nowMs: number,
): OrderStatus {
  const previous = previousConditions(order.status);
  const others = previous.filter((c) => c.type !== READY);
  const ready = { type: READY, ...notOk(why.reason, why.message) };
  // mergeConditions always sets lastTransitionTime.
  const merged = mergeConditions(previous, [ready], order.metadata.generation ?? 0, nowMs) as Condition[];
  return { ...order.status, conditions: [...others, ...merged] };
}

/** True when the status must be written: any field or condition differs (times included). */
export function statusChanged(
  shape: StatusShape,
  before: OrderStatus | undefined,
  after: OrderStatus,
): boolean {
  const prev = before ?? {};
  const plain = (s: OrderStatus) =>
    JSON.stringify(
      fieldsOf(shape)
        .filter((k) => k !== "conditions")
        .map((k) => s[k] ?? null),
    );
  if (plain(prev) !== plain(after)) return true;
  return !sameConditions(previousConditions(prev), previousConditions(after));
}

/**
 * Events for what changed between two statuses: a sub-condition that changed its status or reason, and a
 * switch to a new generation. The Normal ones of one write are one step of the order, said in one Event
 * (the most specific reason: the switch's, else the first condition's; every message); a Warning is said
 * on its own. Messages are condition messages and user names: no secret.
 */
export function transitionEvents(
  shape: StatusShape,
  before: OrderStatus | undefined,
  after: OrderStatus,
): OrderEvent[] {
  const events: OrderEvent[] = [];
  const progress: OrderEvent[] = [];
  for (const type of [shape.resourceCondition, DELIVERY_READY]) {
    const was = before?.conditions?.find((c) => c.type === type);
    const now = after.conditions?.find((c) => c.type === type);
    if (!now || (was && was.status === now.status && was.reason === now.reason)) continue;
    const eventType = eventTypeOf(shape, now);
    if (eventType === "none") continue;
    (eventType === "Normal" ? progress : events).push({
      type: eventType,
      reason: now.reason,
      message: now.message,
    });
  }
  // A held sweep keeps the resource condition's status and reason: its message says so, once per hold.
  const heldNow = after.conditions?.find((c) => c.type === shape.resourceCondition)?.message ?? "";
  const heldBefore = before?.conditions?.find((c) => c.type === shape.resourceCondition)?.message ?? "";
  if (heldNow.includes(SWEEP_HELD_MARK) && !heldBefore.includes(SWEEP_HELD_MARK)) {
    const held = heldNow.slice(heldNow.indexOf("the superseded user"));
    events.push({ type: "Normal", reason: "SweepHeld", message: held });
  }
  events.push(...migrationEvents(shape.backendKind, migrationIn(before), migrationIn(after), after.backend));
  const from = before?.passwordGeneration;
  const to = after.passwordGeneration;
  if (to !== undefined && to !== from) {
    const message =
      from === undefined
        ? `user "${after.username ?? ""}" (generation ${to}) is the delivered user`
        : `rotated from generation ${from} to ${to}: user "${after.username ?? ""}" is the delivered user${unweighedLogins(shape, after)}`;
    progress.push({ type: "Normal", reason: from === undefined ? "UserProvisioned" : "Rotated", message });
  }
  const step = oneStep(progress);
  return step ? [...events, step] : events;
}

/** The Normal transitions of one write as one Event: the switch's reason if there is one, every message. */
function oneStep(progress: OrderEvent[]): OrderEvent | undefined {
  const switched = progress.find((e) => e.reason === "UserProvisioned" || e.reason === "Rotated");
  const lead = switched ?? progress[0];
  if (!lead) return undefined;
  const others = progress.filter((e) => e !== lead).map((e) => e.message);
  return { ...lead, message: [lead.message, ...others].join("; ") };
}

/** Said at a switch whose superseded user's login records could not be read: its sweep cannot weigh them. */
function unweighedLogins(shape: StatusShape, after: OrderStatus): string {
  if (!shape.loginRecords || after.previousPasswordGeneration === undefined) return "";
  if (after.previousPasswordLogins !== undefined) return "";
  return `; the backend keeps no login records by user (or they could not be read), so the sweep of generation ${after.previousPasswordGeneration} weighs its connections and the pods that read the Secret only`;
}
