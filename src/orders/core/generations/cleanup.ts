// Removing generations: strays (pruning) and the previous generation once its grace period is over (sweep).
import { addMilliseconds } from "date-fns/addMilliseconds";
import { isAfter } from "date-fns/isAfter";
import { startOfSecond } from "date-fns/startOfSecond";
import { childrenOf, exists } from "./children.ts";
import { inUse, type UseEvidence } from "../connections.ts";
import { liveGeneration } from "./target.ts";
import type { ChildAction, GenerationChildren, RotationSpec, RotationStatus, SweepHold } from "./types.ts";

/**
 * Deletes for one generation: its access and account children at once, its password Secret only once the
 * account child is gone (the topology operator may still read the Secret while it removes the user from
 * the broker). The sweep and the pruning wait for the account child's removal alone, so the access
 * child's and the Secret's are quiet.
 */
function removal(c: GenerationChildren): ChildAction[] {
  const n = c.generation;
  const actions: ChildAction[] = [];
  if (exists(c.access)) actions.push({ op: "delete", kind: "access", generation: n, quiet: true });
  if (exists(c.account)) actions.push({ op: "delete", kind: "account", generation: n });
  if (c.account.phase === "absent" && c.password !== "absent") {
    actions.push({ op: "delete", kind: "passwordSecret", generation: n, quiet: true });
  }
  return actions;
}

/** Deletes every generation outside `keep`, lowest first. */
export function pruneActions(
  children: readonly GenerationChildren[],
  keep: ReadonlySet<number>,
): ChildAction[] {
  return [...children]
    .filter((c) => !keep.has(c.generation))
    .sort((a, b) => a.generation - b.generation)
    .flatMap(removal);
}

export interface SweepResult {
  readonly actions: ChildAction[];
  readonly status: RotationStatus;
  /** Set while the sweep waits for the previous user's last consumer. */
  readonly held?: SweepHeld | undefined;
}

/**
 * The grace period of the previous generation starts now: called once every delivered Secret of the order
 * carries the live generation. A grace period already running is left alone.
 */
export function startGrace(spec: RotationSpec, status: RotationStatus, now: Date): RotationStatus {
  if (status.previousPasswordGeneration === undefined || status.previousPasswordDeleteAt !== undefined)
    return status;
  return { ...status, previousPasswordDeleteAt: startOfSecond(addMilliseconds(now, spec.gracePeriodMs)) };
}

/** Status times carry whole seconds, as a metav1.Time does. */
export function wholeSeconds(ms: number): Date {
  return startOfSecond(ms);
}

/** A sweep that waits for the last consumer: the superseded user, who uses it, and until when at most. */
export interface SweepHeld extends UseEvidence {
  readonly generation: number;
  readonly until: Date;
}

/**
 * After previousPasswordDeleteAt, in two passes: first the previous access and account children are
 * deleted; on a pass that finds the account child gone, its password Secret is deleted and the previous*
 * fields are cleared.
 * While the backend lists sessions of the previous user (or cannot tell), its login records show a login
 * since the switch, or a pod that reads the delivered Secret runs from before the switch, the sweep waits, up to
 * `holdMs` past the delete time; then it goes ahead anyway. A previous generation without a delete time
 * waits: its grace period starts only once the delivered Secret carries its successor (startGrace).
 */
export function sweepPrevious(
  status: RotationStatus,
  children: readonly GenerationChildren[],
  now: Date,
  hold?: SweepHold,
): SweepResult {
  const previous = status.previousPasswordGeneration;
  if (previous === undefined || previous < 1) return { actions: [], status };
  const cleared = {
    ...status,
    previousPasswordGeneration: undefined,
    previousPasswordDeleteAt: undefined,
    previousPasswordLogins: undefined,
    previousPasswordLoginsSince: undefined,
  };
  if (previous === liveGeneration(status)) return { actions: [], status: cleared };
  const deleteAt = status.previousPasswordDeleteAt;
  if (deleteAt === undefined || isAfter(deleteAt, now)) return { actions: [], status };
  const c = childrenOf(children, previous);
  const consumers = hold?.consumers;
  const until = addMilliseconds(deleteAt, hold?.holdMs ?? 0);
  const evidence = consumers && {
    consumers,
    loginsSinceSwitch: hold?.loginsSinceSwitch,
    podsBeforeSwitch: hold?.podsBeforeSwitch,
  };
  if (evidence && inUse(evidence) && isAfter(until, now)) {
    return {
      actions: [],
      status,
      held: { generation: previous, ...evidence, until: wholeSeconds(until.getTime()) },
    };
  }
  const actions = removal(c);
  return { actions, status: c.account.phase === "absent" ? cleared : status };
}

/**
 * The superseded generation whose sweep is due: the backend is asked who uses it. Also when its account
 * child is gone: a User whose finalizer was stripped leaves a broker user that the pass completing the
 * sweep removes as a stray, and its consumers get the same hold.
 */
export function sweepDue(status: RotationStatus, now: Date): number | undefined {
  const previous = status.previousPasswordGeneration;
  const deleteAt = status.previousPasswordDeleteAt;
  if (previous === undefined || previous < 1 || previous === liveGeneration(status)) return undefined;
  if (deleteAt === undefined || isAfter(deleteAt, now)) return undefined;
  return previous;
}
