// Status as upstream writes it: a Ready condition (and PasswordSynced on a User), lastTransitionTime
// kept while a condition's type and status stay the same (the runtime's rule), observedGeneration set
// only on success and never inside a condition. Pure: the port writes the result only when it differs.
import { FAILED_CREATE_OR_UPDATE } from "../../api/contracts.ts";
import { mergeConditions as mergeRuntimeConditions } from "../../runtime/base/conditions.ts";
import { sameStatus } from "../../runtime/port/kube.ts";

export const Reason = {
  SuccessfulCreateOrUpdate: "SuccessfulCreateOrUpdate",
  FailedCreateOrUpdate: FAILED_CREATE_OR_UPDATE,
  /** Beyond upstream: the broker refused to delete what a deleted object declared. */
  FailedDelete: "FailedDelete",
  InvalidSpec: "InvalidSpec",
  SuccessfulPasswordSync: "SuccessfulPasswordSync",
  FailedPasswordSync: "FailedPasswordSync",
  /** Beyond upstream: a gatekeeper plugin refused the object at the entry of its pass. */
  GatekeeperRejected: "GatekeeperRejected",
  /** Beyond upstream: --secret-namespaces leaves out a namespace whose Secrets the object needs. */
  SecretsOutOfReach: "SecretsOutOfReach",
} as const;

export interface Condition {
  type: string;
  status: "True" | "False";
  reason: string;
  message?: string;
  lastTransitionTime?: string;
}

export type StatusFields = Record<string, unknown> & {
  conditions?: Condition[] | undefined;
  observedGeneration?: number | undefined;
};

export const ready = (): Omit<Condition, "lastTransitionTime"> => ({
  type: "Ready",
  status: "True",
  reason: Reason.SuccessfulCreateOrUpdate,
});

/** Ready False: FailedCreateOrUpdate unless `reason` says otherwise (GatekeeperRejected, SecretsOutOfReach). */
export const notReady = (
  message: string,
  reason: string = Reason.FailedCreateOrUpdate,
): Omit<Condition, "lastTransitionTime"> => ({ type: "Ready", status: "False", reason, message });

/** Beyond upstream: why a deleted object is still there (e.g. a quorum queue refuses if-empty). */
export const notDeleted = (message: string): Omit<Condition, "lastTransitionTime"> => ({
  type: "Ready",
  status: "False",
  reason: Reason.FailedDelete,
  message,
});

export const passwordSynced = (): Omit<Condition, "lastTransitionTime"> => ({
  type: "PasswordSynced",
  status: "True",
  reason: Reason.SuccessfulPasswordSync,
});

export const passwordNotSynced = (message: string): Omit<Condition, "lastTransitionTime"> => ({
  type: "PasswordSynced",
  status: "False",
  reason: Reason.FailedPasswordSync,
  message,
});

/**
 * `current` with each of `updates` put in place (the others stay as they are); a condition whose
 * status did not change keeps its time. An empty message is left out, as upstream's omitempty does.
 */
export function mergeConditions(
  current: readonly Condition[],
  updates: readonly Omit<Condition, "lastTransitionTime">[],
  now: Date,
): Condition[] {
  const merged = mergeRuntimeConditions(
    current.map((c) => ({ ...c, message: c.message ?? "" })),
    updates.map((u) => ({ ...u, message: u.message ?? "" })),
    undefined,
    now.getTime(),
  ).map(({ message, ...rest }): Condition => ({
    ...(rest as Omit<Condition, "message">),
    ...(message ? { message } : {}),
  }));
  const out = current.map((c) => merged.find((m) => m.type === c.type) ?? { ...c });
  return [...out, ...merged.filter((m) => !current.some((c) => c.type === m.type))];
}

/** The status after a pass: the conditions merged, and on success the generation and extra fields. */
export function nextStatus(
  current: StatusFields | undefined,
  updates: readonly Omit<Condition, "lastTransitionTime">[],
  now: Date,
  success: { generation: number | undefined; fields?: Record<string, unknown> } | undefined,
): StatusFields {
  const status: StatusFields = { ...current };
  status.conditions = mergeConditions(current?.conditions ?? [], updates, now);
  if (success) {
    if (success.generation !== undefined) status.observedGeneration = success.generation;
    Object.assign(status, success.fields);
  }
  return status;
}

/** Whether a write would change anything, by the port's own comparison. */
export function statusDiffers(current: StatusFields | undefined, next: StatusFields): boolean {
  return !sameStatus(current ?? {}, next);
}
