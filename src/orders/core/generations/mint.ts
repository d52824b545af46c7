// Minting the target generation: password Secret, then the account child importing it, then the access child.
import { exists } from "./children.ts";
import type { ChildAction, GenerationChildren } from "./types.ts";

export type MintOutcome =
  /**
   * Waiting for the topology operator, for one of the target's own pieces to be removed (removal), or
   * for the account children of pruned generations to be gone (strays), before the next step.
   */
  | { readonly kind: "minting"; readonly waitingFor: "account" | "access" | "removal" | "strays" }
  /** The backend refused the account or the access child. */
  | { readonly kind: "refused"; readonly piece: "account" | "access"; readonly message: string }
  /** Password, account and access children are all there and Ready. */
  | { readonly kind: "complete" };

export interface MintResult {
  readonly actions: ChildAction[];
  readonly outcome: MintOutcome;
}

/**
 * The next writes for the target generation. A password Secret is only ever created, never rewritten:
 * when the target's password is lost (Secret gone or empty) while its account or access child exists,
 * those are deleted first, because the account child may hold the lost password; minting then starts
 * over. A lost account child takes its access child with it (see below).
 */
export function mintTarget(c: GenerationChildren): MintResult {
  const n = c.generation;
  const actions: ChildAction[] = [];
  if (c.password !== "present") {
    if (c.account.phase !== "absent" || c.access.phase !== "absent") {
      if (exists(c.access)) actions.push({ op: "delete", kind: "access", generation: n });
      if (exists(c.account)) actions.push({ op: "delete", kind: "account", generation: n });
      return { actions, outcome: { kind: "minting", waitingFor: "removal" } };
    }
    if (c.password === "empty") {
      actions.push({ op: "delete", kind: "passwordSecret", generation: n });
      return { actions, outcome: { kind: "minting", waitingFor: "removal" } };
    }
    actions.push({ op: "create", kind: "passwordSecret", generation: n });
    actions.push({ op: "create", kind: "account", generation: n });
    return { actions, outcome: { kind: "minting", waitingFor: "account" } };
  }

  switch (c.account.phase) {
    case "absent":
      // An account child made again is a new account on the backend, which dropped the lost one's rights
      // with it: an access child left from before would read Ready while granting nothing, so it goes
      // too and is made again once the new account child is Ready.
      if (exists(c.access)) actions.push({ op: "delete", kind: "access", generation: n });
      actions.push({ op: "create", kind: "account", generation: n });
      return { actions, outcome: { kind: "minting", waitingFor: "account" } };
    case "deleting":
      return { actions, outcome: { kind: "minting", waitingFor: "removal" } };
    case "pending":
      return { actions, outcome: { kind: "minting", waitingFor: "account" } };
    case "refused": {
      const { newPasswordAt } = c.account;
      const message = newPasswordAt
        ? `${c.account.message}; a new user with a new password follows from ${newPasswordAt.toISOString()}`
        : c.account.message;
      return { actions, outcome: { kind: "refused", piece: "account", message } };
    }
    case "ready":
      break;
  }

  switch (c.access.phase) {
    case "absent":
      actions.push({ op: "create", kind: "access", generation: n });
      return { actions, outcome: { kind: "minting", waitingFor: "access" } };
    case "deleting":
      return { actions, outcome: { kind: "minting", waitingFor: "removal" } };
    case "pending":
      return { actions, outcome: { kind: "minting", waitingFor: "access" } };
    case "refused":
      return { actions, outcome: { kind: "refused", piece: "access", message: c.access.message } };
    case "ready":
      return { actions, outcome: { kind: "complete" } };
  }
}
