// Reading the listed children: classifying a topology CR and a password Secret, and indexing by generation.
import type { ChildState, GenerationChildren, PasswordState } from "./types.ts";

/** The fields of a User or Permission CR that decide its state. */
export interface TopologyChildObject {
  readonly metadata?: { readonly generation?: number; readonly deletionTimestamp?: string | Date };
  readonly status?: {
    readonly observedGeneration?: number;
    readonly conditions?: readonly {
      readonly type: string;
      readonly status: string;
      readonly reason?: string;
      readonly message?: string;
    }[];
  };
}

/** The reason with which the topology operator reports that the broker refused a CR. */
export const REFUSED_REASON = "FailedCreateOrUpdate";

/**
 * The state of a listed topology CR (undefined when not listed). Ready and refused count only once the
 * status speaks of the current spec (observedGeneration caught up with metadata.generation).
 */
export function childStateOf(object: TopologyChildObject | undefined): ChildState {
  if (object === undefined) return { phase: "absent" };
  if (object.metadata?.deletionTimestamp !== undefined) return { phase: "deleting" };
  const caughtUp = (object.status?.observedGeneration ?? 0) >= (object.metadata?.generation ?? 0);
  const ready = object.status?.conditions?.find((c) => c.type === "Ready");
  if (!caughtUp || ready === undefined) return { phase: "pending" };
  if (ready.status === "True") return { phase: "ready" };
  if (ready.status === "False" && ready.reason === REFUSED_REASON) {
    return { phase: "refused", message: ready.message ?? "" };
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

/** A user or permission counts as existing while it is listed and not being deleted. */
export function exists(state: ChildState): boolean {
  return state.phase !== "absent" && state.phase !== "deleting";
}

const nothing: Omit<GenerationChildren, "generation"> = {
  password: "absent",
  user: { phase: "absent" },
  permission: { phase: "absent" },
};

/** The children of generation N, all absent when the listing has none. */
export function childrenOf(children: readonly GenerationChildren[], generation: number): GenerationChildren {
  return children.find((c) => c.generation === generation) ?? { generation, ...nothing };
}
