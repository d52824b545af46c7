// Reading the listed children: classifying a child CR and a password Secret, and indexing by generation.
import { FAILED_CREATE_OR_UPDATE } from "../../../api/contracts.ts";
import type { ChildState, GenerationChildren, PasswordState } from "./types.ts";

interface ReadyCondition {
  readonly type: string;
  readonly status: string;
  readonly reason?: string | undefined;
  readonly message?: string | undefined;
  readonly observedGeneration?: number | undefined;
  readonly lastTransitionTime?: string | Date | undefined;
}

/** The fields of an account or access child (a User, a Permission, a Grant) that decide its state. */
export interface ChildObject {
  readonly metadata?: { readonly generation?: number; readonly deletionTimestamp?: string | Date };
  readonly status?: {
    readonly observedGeneration?: number;
    readonly conditions?: readonly ReadyCondition[];
  };
}

/** How the operator serving a kind's children reports on them: the refusal's reason, the generation seen. */
export interface ChildReadiness {
  readonly refusedReason: string;
  /** Further reasons that are refusals too (seed 002's NotOwned: what is on the backend is another's). */
  readonly otherRefusals?: readonly string[];
  /** Refusals of the password itself (a validation policy): a new generation with a new password answers them. */
  readonly newPasswordReasons?: readonly string[];
  readonly observedGeneration: (object: ChildObject, ready: ReadyCondition) => number | undefined;
}

/** The topology operator's: status.observedGeneration. */
export const topologyReadiness: ChildReadiness = {
  refusedReason: FAILED_CREATE_OR_UPDATE,
  observedGeneration: (object) => object.status?.observedGeneration,
};

/**
 * How long a password a validation policy refused is shown before a new generation tries another, so that
 * a policy no generated password meets mints one generation a minute rather than one per pass.
 */
export const NEW_PASSWORD_AFTER_MS = 60_000;

/**
 * The state of a listed child CR (undefined when not listed). Ready and refused count only once the
 * status speaks of the current spec (observedGeneration caught up with metadata.generation).
 */
export function childStateOf(
  object: ChildObject | undefined,
  readiness: ChildReadiness = topologyReadiness,
): ChildState {
  if (object === undefined) return { phase: "absent" };
  if (object.metadata?.deletionTimestamp !== undefined) return { phase: "deleting" };
  const ready = object.status?.conditions?.find((c) => c.type === "Ready");
  if (ready === undefined) return { phase: "pending" };
  const caughtUp = (readiness.observedGeneration(object, ready) ?? 0) >= (object.metadata?.generation ?? 0);
  if (!caughtUp) return { phase: "pending" };
  if (ready.status === "True") return { phase: "ready" };
  const listed = (reasons?: readonly string[]) =>
    ready.reason !== undefined && reasons?.includes(ready.reason) === true;
  const newPassword = listed(readiness.newPasswordReasons);
  const refusal = ready.reason === readiness.refusedReason || listed(readiness.otherRefusals) || newPassword;
  if (ready.status === "False" && refusal) {
    const message = ready.message ?? "";
    if (!newPassword) return { phase: "refused", message };
    const since = new Date(ready.lastTransitionTime ?? 0).getTime();
    return { phase: "refused", message, newPasswordAt: new Date((since || 0) + NEW_PASSWORD_AFTER_MS) };
  }
  return { phase: "pending" };
}

/** The state of a password Secret (undefined when not listed), from its base64 `data`. */
export function passwordStateOf(
  secret: { readonly data?: Record<string, string> } | undefined,
): PasswordState {
  if (secret === undefined) return "absent";
  const encoded = secret.data?.["password"];
  return encoded !== undefined && Buffer.from(encoded, "base64").length > 0 ? "present" : "empty";
}

/** An account or access child counts as existing while it is listed and not being deleted. */
export function exists(state: ChildState): boolean {
  return state.phase !== "absent" && state.phase !== "deleting";
}

const nothing: Omit<GenerationChildren, "generation"> = {
  password: "absent",
  account: { phase: "absent" },
  access: { phase: "absent" },
};

/** The children of generation N, all absent when the listing has none. */
export function childrenOf(children: readonly GenerationChildren[], generation: number): GenerationChildren {
  return children.find((c) => c.generation === generation) ?? { generation, ...nothing };
}
