// Minting the target generation: password Secret, then the User importing it, then the Permission.
import { exists } from "./children.ts";
import type { ChildAction, GenerationChildren } from "./types.ts";

export type MintOutcome =
  /**
   * Waiting for the topology operator, for one of the target's own pieces to be removed (removal), or
   * for the Users of pruned generations to be gone (strays), before the next step.
   */
  | { readonly kind: "minting"; readonly waitingFor: "user" | "permission" | "removal" | "strays" }
  /** The broker refused the User or the Permission. */
  | { readonly kind: "refused"; readonly piece: "user" | "permission"; readonly message: string }
  /** Password, User and Permission are all there and Ready. */
  | { readonly kind: "complete" };

export interface MintResult {
  readonly actions: ChildAction[];
  readonly outcome: MintOutcome;
}

/**
 * The next writes for the target generation. A password Secret is only ever created, never rewritten:
 * when the target's password is lost (Secret gone or empty) while its User or Permission exists, those
 * are deleted first, because the User may hold the lost password; minting then starts over. A lost
 * User takes its Permission with it (see below).
 */
export function mintTarget(c: GenerationChildren): MintResult {
  const n = c.generation;
  const actions: ChildAction[] = [];
  if (c.password !== "present") {
    if (c.user.phase !== "absent" || c.permission.phase !== "absent") {
      if (exists(c.permission)) actions.push({ op: "delete", kind: "permission", generation: n });
      if (exists(c.user)) actions.push({ op: "delete", kind: "user", generation: n });
      return { actions, outcome: { kind: "minting", waitingFor: "removal" } };
    }
    if (c.password === "empty") {
      actions.push({ op: "delete", kind: "passwordSecret", generation: n });
      return { actions, outcome: { kind: "minting", waitingFor: "removal" } };
    }
    actions.push({ op: "create", kind: "passwordSecret", generation: n });
    actions.push({ op: "create", kind: "user", generation: n });
    return { actions, outcome: { kind: "minting", waitingFor: "user" } };
  }

  switch (c.user.phase) {
    case "absent":
      // A User made again is a new account on the backend, which dropped the lost one's rights with it:
      // a Permission (or Grant) left from before would read Ready while granting nothing, so it goes
      // too and is made again once the new User is Ready.
      if (exists(c.permission)) actions.push({ op: "delete", kind: "permission", generation: n });
      actions.push({ op: "create", kind: "user", generation: n });
      return { actions, outcome: { kind: "minting", waitingFor: "user" } };
    case "deleting":
      return { actions, outcome: { kind: "minting", waitingFor: "removal" } };
    case "pending":
      return { actions, outcome: { kind: "minting", waitingFor: "user" } };
    case "refused":
      return { actions, outcome: { kind: "refused", piece: "user", message: c.user.message } };
    case "ready":
      break;
  }

  switch (c.permission.phase) {
    case "absent":
      actions.push({ op: "create", kind: "permission", generation: n });
      return { actions, outcome: { kind: "minting", waitingFor: "permission" } };
    case "deleting":
      return { actions, outcome: { kind: "minting", waitingFor: "removal" } };
    case "pending":
      return { actions, outcome: { kind: "minting", waitingFor: "permission" } };
    case "refused":
      return { actions, outcome: { kind: "refused", piece: "permission", message: c.permission.message } };
    case "ready":
      return { actions, outcome: { kind: "complete" } };
  }
}
