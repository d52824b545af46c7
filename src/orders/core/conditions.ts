// The conditions every order kind shares: the reasons of consent, the secret store and delivery, their
// messages, the requeue delays the reference lists, and the builder of the conditions (the kind's
// resource condition, DeliveryReady and the aggregate Ready, then Reconciling and Stalled). No message
// here takes a password, a token or a connection URL.
import type { ConditionState } from "./types.ts";
import { conditionTime, mergeConditions } from "../../runtime/base/conditions.ts";
import { outOfReachText } from "../../runtime/base/secret-reach.ts";
import { RECONCILING, STALLED } from "./health.ts";

export const DELIVERY_READY = "DeliveryReady";
export const READY = "Ready";

/** Reasons of the order machinery, whatever the kind. A kind adds its own (see rabbitmq/conditions.ts). */
export const CoreReason = {
  SecretStoreNotReady: "SecretStoreNotReady",
  Paused: "Paused",
  Delivered: "Delivered",
  WaitingForPassword: "WaitingForPassword",
  BackupNotSynced: "BackupNotSynced",
  DeliveryRefused: "DeliveryRefused",
  DeliveryError: "DeliveryError",
  ControlPlaneNotFound: "ControlPlaneNotFound",
  NamespaceNotAssigned: "NamespaceNotAssigned",
  ClusterNameTooLong: "ClusterNameTooLong",
  SecretsOutOfReach: "SecretsOutOfReach",
  AllReady: "AllReady",
  NotAllReady: "NotAllReady",
} as const;

/**
 * Beyond the seed's table: Ready of a deleted order whose finalizer is still held, naming the teardown
 * step that blocks and why.
 */
export const DELETING = "Deleting";

/** Beyond the seed's table: Ready and Stalled of an order whose stored object its schema refuses. */
export const INVALID_OBJECT = "InvalidObject";

/** Beyond the seed's table: Ready and Stalled of an order whose next generation the operator cannot hold. */
export const GENERATION_OUT_OF_RANGE = "GenerationOutOfRange";

/** Requeue delays the reference lists. */
export const REQUEUE = {
  /** ControlPlaneNotFound, the backend waits, SecretStoreNotReady, a held teardown. */
  short: 10_000,
  /** NamespaceNotAssigned. */
  unassigned: 60_000,
  /** A backend kind not served, and the latest refresh of an order on a target cluster. */
  long: 600_000,
} as const;

/** How a cluster is named in messages. */
export function location(cluster: string): string {
  return cluster === "" ? "the management cluster" : `target cluster "${cluster}"`;
}

const key = (namespace: string, name: string): string => `${namespace}/${name}`;

/** The messages of the order machinery. */
export const coreMessages = {
  clusterNameTooLong: (cluster: string): string =>
    `the order lives on ${location(cluster)}, whose name exceeds 63 characters and cannot be carried as a label value; nothing is provisioned for an order on that cluster`,
  controlPlaneNotFound: (cp: { namespace: string; name: string }): string =>
    `ControlPlane ${key(cp.namespace, cp.name)} not found; the order is deferred until it exists`,
  namespaceNotAssigned: (
    cp: { namespace: string; name: string },
    namespace: string,
    cluster: string,
  ): string =>
    `ControlPlane ${key(cp.namespace, cp.name)} assigns no namespace "${namespace}" on ${location(cluster)} (spec.namespaceAssignments); the order is frozen: nothing is provisioned, delivered or repaired, and what was created stays`,
  secretsOutOfReach: (namespaces: readonly string[]): string =>
    `${outOfReachText(namespaces)}; nothing is provisioned or delivered until it is added`,
  teardownOutOfReach: (
    namespaces: readonly string[],
    controlPlaneNamespace: string,
    leftovers: { finalizer: string; selector: string },
  ): string =>
    `${outOfReachText(namespaces)}; the teardown deletes nothing until it is listed, and the finalizer ${leftovers.finalizer} stays. Removing the finalizer by hand instead hands the order's children in namespace "${controlPlaneNamespace}" (its users and their password Secrets, labelled ${leftovers.selector}) to the orphan sweep, which may not use the Secrets there either`,
  invalidObject: (issues: string): string =>
    `the order as stored does not match its schema (${issues}); nothing is provisioned, rotated or delivered, and what was created stays. Correct the field, or where the schema does not let it change (passwordGeneration may only increase) delete the order (its teardown runs) and create it again`,
  secretStoreNotReady: (why: string): string =>
    `the secret store cannot be used, so the credentials cannot be backed up: ${why}`,
  childError: (what: string, cause: string): string => `${what} failed: ${cause}`,
  notAdopted: (kind: string, namespace: string, name: string): string =>
    `refusing to adopt pre-existing ${kind} ${key(namespace, name)}: it was not created by this order`,
  leftovers: (children: { kind: string; namespace: string; name: string; uid: string }[]): string =>
    `removing children an earlier order of the same name made (${children
      .map((c) => `${c.kind} ${key(c.namespace, c.name)}, made by order uid ${c.uid}`)
      .join("; ")}): never adopted, this order makes its own once they are gone`,
  waitingForPassword: (): string => "waiting for a provisioned user whose password can be delivered",
  paused: (annotation: string): string =>
    `paused by the annotation ${annotation}: nothing is provisioned, rotated, swept or delivered until it is removed`,
  backupNotSynced: (path: string): string =>
    `waiting for the current credentials to be confirmed stored at OpenBao path "${path}"`,
  deliveryRefused: (namespace: string, secret: string): string =>
    `Secret ${key(namespace, secret)} exists and is not owned by this order; delete it or rename the order`,
  deliveryError: (what: string, cause: string): string => `${what} failed: ${cause}`,
} as const;

/** metav1.Condition. */
export interface Condition extends ConditionState {
  type: string;
  observedGeneration: number;
  lastTransitionTime: string;
}

export const ok = <R extends string>(reason: R, message: string) => ({
  status: "True" as const,
  reason,
  message,
});
export const notOk = <R extends string>(reason: R, message: string) => ({
  status: "False" as const,
  reason,
  message,
});

/** The aggregate: True/AllReady when both sub-conditions are True, else False/NotAllReady naming them. */
export function aggregateReady(
  resource: { type: string; state: ConditionState },
  delivery: ConditionState,
  allReady: string,
): ConditionState {
  if (resource.state.status === "True" && delivery.status === "True")
    return ok(CoreReason.AllReady, allReady);
  const pending = [
    [resource.type, resource.state],
    [DELIVERY_READY, delivery],
  ] as const;
  const detail = pending
    .filter(([, c]) => c.status !== "True")
    .map(([type, c]) => `${type} is ${c.status} (${c.reason})`)
    .join("; ");
  return notOk(CoreReason.NotAllReady, detail);
}

/**
 * The conditions of a pass. lastTransitionTime moves only when a condition's status changes, as metav1
 * conditions require; otherwise the previous time is kept so that an unchanged status is not rewritten.
 */
export function orderConditions(input: {
  resourceType: string;
  resource: ConditionState;
  delivery: ConditionState;
  /** Replaces the aggregate of the two (a gatekeeper plugin's rejection). */
  ready?: ConditionState | undefined;
  /** Reconciling and Stalled (health.ts), after Ready. */
  health?: { reconciling: ConditionState; stalled: ConditionState } | undefined;
  allReady: string;
  generation: number;
  previous: readonly Condition[];
  now: Date;
}): Condition[] {
  const states: [string, ConditionState][] = [
    [input.resourceType, input.resource],
    [DELIVERY_READY, input.delivery],
    [
      READY,
      input.ready ??
        aggregateReady({ type: input.resourceType, state: input.resource }, input.delivery, input.allReady),
    ],
  ];
  if (input.health) states.push([RECONCILING, input.health.reconciling], [STALLED, input.health.stalled]);
  // runtime's merge keeps lastTransitionTime for an unchanged status and stamps the generation.
  const previous = input.previous.map((c) => ({ ...c }));
  const desired = states.map(([type, state]) => ({ type, ...state }));
  return mergeConditions(previous, desired, input.generation, input.now.getTime()) as Condition[];
}

/** True when two condition lists say the same, so the status need not be written. */
export function sameConditions(a: readonly Condition[], b: readonly Condition[]): boolean {
  if (a.length !== b.length) return false;
  return a.every((x) => {
    const y = b.find((c) => c.type === x.type);
    return (
      y !== undefined &&
      y.status === x.status &&
      y.reason === x.reason &&
      y.message === x.message &&
      y.observedGeneration === x.observedGeneration &&
      y.lastTransitionTime === x.lastTransitionTime
    );
  });
}

/** metav1.Time's wire form: RFC 3339 in UTC with whole seconds. */
export const rfc3339 = (t: Date): string => conditionTime(t.getTime());
