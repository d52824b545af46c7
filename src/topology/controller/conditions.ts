// Status as upstream writes it: a Ready condition (and PasswordSynced on a User), lastTransitionTime
// kept while a condition's type and status stay the same, observedGeneration set only on success.
// Pure: the engine compares the result with the object's status and writes only a difference.
import { canonicalJson } from "../broker/index.ts";

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
  reason: "SuccessfulCreateOrUpdate",
});

export const notReady = (message: string): Omit<Condition, "lastTransitionTime"> => ({
  type: "Ready",
  status: "False",
  reason: "FailedCreateOrUpdate",
  message,
});

/** Beyond upstream: why a deleted object is still there (e.g. a quorum queue refuses if-empty). */
export const notDeleted = (message: string): Omit<Condition, "lastTransitionTime"> => ({
  type: "Ready",
  status: "False",
  reason: "FailedDelete",
  message,
});

export const passwordSynced = (): Omit<Condition, "lastTransitionTime"> => ({
  type: "PasswordSynced",
  status: "True",
  reason: "SuccessfulPasswordSync",
});

export const passwordNotSynced = (message: string): Omit<Condition, "lastTransitionTime"> => ({
  type: "PasswordSynced",
  status: "False",
  reason: "FailedPasswordSync",
  message,
});

/** `current` with each of `updates` put in place; a condition whose status did not change keeps its time. */
export function mergeConditions(
  current: readonly Condition[],
  updates: readonly Omit<Condition, "lastTransitionTime">[],
  now: Date,
): Condition[] {
  const out = current.map((c) => ({ ...c }));
  for (const update of updates) {
    const index = out.findIndex((c) => c.type === update.type);
    const previous = index >= 0 ? out[index] : undefined;
    const lastTransitionTime =
      previous?.status === update.status && previous.lastTransitionTime
        ? previous.lastTransitionTime
        : now.toISOString().replace(/\.\d{3}Z$/, "Z");
    const next: Condition = { ...update, lastTransitionTime };
    if (index >= 0) out[index] = next;
    else out.push(next);
  }
  return out;
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

/** Whether a write would change anything. */
export function statusDiffers(current: StatusFields | undefined, next: StatusFields): boolean {
  return canonicalJson(current ?? {}) !== canonicalJson(next);
}
