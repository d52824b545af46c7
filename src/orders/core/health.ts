// The two conditions GitOps tools read beside Ready, by the abnormal-true convention kstatus follows
// (Flux's health checks, cli-utils' `apply --wait`): Reconciling True reads InProgress, Stalled True
// reads Failed. Ready alone cannot say either: it stays True through a rotation the spec asks for (the
// delivered credential stays valid), and a False Ready does not tell a wait from a failure that needs a
// person. The two are written with every status, False when they do not hold.
import type { ConditionState } from "./types.ts";

export const RECONCILING = "Reconciling";
export const STALLED = "Stalled";

export const HealthReason = {
  /** spec.passwordGeneration asks for a generation the delivered Secret does not carry yet. */
  RotationInProgress: "RotationInProgress",
  /** Reconciling False: the delivered Secret carries what the spec asks for. */
  Reconciled: "Reconciled",
  /** Reconciling False while Stalled is True: retried, but a person must act first. */
  Stalled: "Stalled",
  /** Stalled False. */
  NotStalled: "NotStalled",
} as const;

export interface HealthInput {
  /** The sub-conditions in the order they are reported (resource, delivery), then a Ready override. */
  conditions: readonly { type: string; state: ConditionState }[];
  /** The aggregate Ready of the pass. */
  ready: ConditionState;
  /** Whether a False condition's reason needs a person (the reasons that make a Warning event). */
  needsPerson: (reason: string) => boolean;
  /** spec.passwordGeneration; undefined when the spec sets none. */
  declaredGeneration: number | undefined;
  /** The generation the delivered Secret carries (status.passwordGeneration); undefined before the first. */
  deliveredGeneration: number | undefined;
}

export function orderHealth(input: HealthInput): { reconciling: ConditionState; stalled: ConditionState } {
  const failed = input.conditions.find((c) => c.state.status !== "True" && input.needsPerson(c.state.reason));
  if (failed) {
    return {
      reconciling: {
        status: "False",
        reason: HealthReason.Stalled,
        message: `retried, but ${failed.type} needs a person first (see Stalled)`,
      },
      stalled: {
        status: "True",
        reason: failed.state.reason,
        message: `${failed.type} is ${failed.state.status} (${failed.state.reason}): ${failed.state.message}`,
      },
    };
  }
  const stalled: ConditionState = {
    status: "False",
    reason: HealthReason.NotStalled,
    message: "no condition needs a person",
  };
  const { declaredGeneration: declared, deliveredGeneration: delivered } = input;
  // The first generation is provisioning (Ready False says so); a scheduled rotation raises the
  // delivered generation above the spec's, and is no change the spec asked for.
  if (declared !== undefined && delivered !== undefined && delivered < declared) {
    return {
      reconciling: {
        status: "True",
        reason: HealthReason.RotationInProgress,
        message: `spec.passwordGeneration asks for generation ${declared}; the delivered Secret carries generation ${delivered}`,
      },
      stalled,
    };
  }
  if (input.ready.status !== "True") return { reconciling: { ...input.ready, status: "True" }, stalled };
  return {
    reconciling: {
      status: "False",
      reason: HealthReason.Reconciled,
      message: "the delivered Secret carries what the spec asks for",
    },
    stalled,
  };
}
