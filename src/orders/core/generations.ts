/**
 * Password generations of an order: the rotation state machine, as pure functions of the
 * listed children, the order's spec and status, and an injected clock. They return decisions and
 * writes; the reconciler performs them.
 *
 * Rules (seed 001, Rotation):
 * - A rotation mints a new user (generation N+1) beside the live one (N), never a new password for N.
 * - Target: with nothing live, the declared generation (at least 1). Otherwise the highest successor in
 *   flight (its User exists; a refused one only while spec.passwordGeneration does not exceed it). Else,
 *   while a grace period runs (previous* set, until the sweep clears them), nothing new starts, so the
 *   order holds at most two users. Else max(declared, live+1) when the declared generation is above the
 *   live one, when lastRotation + interval <= now (interval 0: schedule off), or when a piece of the
 *   live generation is gone (password Secret gone or empty, User or Permission gone or being deleted).
 * - Pruning: every generation other than the live one, the target and the previous one is deleted.
 * - Minting: password Secret (created once), User, then the Permission once the User is Ready. A new
 *   User waits until the Users of pruned generations are gone; a target whose password is lost under
 *   an existing User is taken down and minted afresh.
 * - Switch: once the target's User and Permission are Ready and the caller's check of the credentials
 *   against the broker passes, the live generation becomes the previous one (deleted after the grace
 *   period), lastRotation = now and nextRotation = now + interval. A raise goes straight to the raised
 *   generation.
 * - Sweep after previousPasswordDeleteAt: Permission and User first; the password Secret and the
 *   previous* fields once the User is gone (a later pass).
 * - Requeue at the next deadline (see requeueAfter).
 *
 * A pass: `planGenerations` → perform `plan.actions` in order → if `plan.switchable` is set, check the
 * successor against the broker and call `decideSwitch` → write the status → `requeueAfter`.
 */
import { childrenOf } from "./generations/children.ts";
import { pruneActions, sweepPrevious, wholeSeconds } from "./generations/cleanup.ts";
import { mintTarget, type MintOutcome } from "./generations/mint.ts";
import { switchStatus } from "./generations/schedule.ts";
import { chooseTarget, graceRunning, liveGeneration, nextRotationOf } from "./generations/target.ts";
import type {
  ChildAction,
  GenerationInput,
  RotationStatus,
  SwitchCheck,
  ResourceView,
  TargetDecision,
} from "./generations/types.ts";
import { deliveredView, provisionView, refusedSwitchView } from "./generations/view.ts";

export * from "./generations/types.ts";
export {
  childStateOf,
  passwordStateOf,
  REFUSED_REASON,
  topologyReadiness,
  type ChildObject,
  type ChildReadiness,
} from "./generations/children.ts";
export { chooseTarget, lostPieces, nextRotationOf } from "./generations/target.ts";
export { pruneActions, startGrace, sweepPrevious, type SweepResult } from "./generations/cleanup.ts";
export { mintTarget, type MintOutcome, type MintResult } from "./generations/mint.ts";
export {
  requeueAfter,
  sweepUnderWay,
  switchStatus,
  TARGET_CLUSTER_REFRESH_MS,
} from "./generations/schedule.ts";

export interface GenerationPlan {
  readonly target: TargetDecision;
  /** Prune, sweep and mint writes, in the order to perform them. */
  readonly actions: readonly ChildAction[];
  /** The status after this pass without a switch (sweep applied, nextRotation from the current interval). */
  readonly status: RotationStatus;
  /** Set when the target is complete and may become the delivered generation, after the caller's check. */
  readonly switchable?: number | undefined;
  /** The resource condition (VhostReady) for this pass, without a switch. */
  readonly view: ResourceView;
}

function targetGeneration(target: TargetDecision): number | undefined {
  return target.kind === "first" || target.kind === "continue" || target.kind === "rotate"
    ? target.generation
    : undefined;
}

export function planGenerations(input: GenerationInput, now: Date): GenerationPlan {
  const { spec, children } = input;
  const live = liveGeneration(input.status);
  // A live generation without lastRotation (status lost in part) starts its schedule now.
  const anchored: RotationStatus =
    live > 0 && input.status.lastRotation === undefined
      ? { ...input.status, lastRotation: wholeSeconds(now.getTime()) }
      : input.status;
  const target = chooseTarget(spec, anchored, children, now);
  const goal = targetGeneration(target);

  const keep = new Set<number>();
  if (live > 0) keep.add(live);
  if (goal !== undefined) keep.add(goal);
  if (graceRunning(anchored)) keep.add(anchored.previousPasswordGeneration ?? 0);
  const pruned = pruneActions(children, keep);

  const sweep = sweepPrevious(spec, anchored, children, now);
  const status = { ...sweep.status, nextRotation: nextRotationOf(spec, sweep.status.lastRotation) };

  let mint: MintOutcome | undefined;
  const minted: ChildAction[] = [];
  if (goal !== undefined) {
    const result = mintTarget(childrenOf(children, goal));
    const strayUsers = children.some((c) => !keep.has(c.generation) && c.user.phase !== "absent");
    if (strayUsers && result.actions.some((a) => a.op === "create" && a.kind === "user")) {
      // A new User waits until the pruned ones are gone, so that the order never holds more than two.
      mint = { kind: "minting", waitingFor: "strays" };
    } else {
      mint = result.outcome;
      minted.push(...result.actions);
    }
  }
  // A successor in flight during a grace period waits for the sweep before it takes over.
  const switchable = mint?.kind === "complete" && !graceRunning(status) ? goal : undefined;
  return {
    target,
    actions: [...pruned, ...sweep.actions, ...minted],
    status,
    switchable,
    view: provisionView({ ...input, status: anchored }, target, mint),
  };
}

export interface SwitchDecision {
  readonly switched: boolean;
  readonly status: RotationStatus;
  readonly view: ResourceView;
}

/**
 * Completes a pass whose plan is switchable. `check` is the caller's verdict on whether the broker
 * accepts the successor's credentials (pass `{ accepted: true }` to switch on Ready alone); its reason
 * lands in VhostReady's message, so it must not carry a secret.
 */
export function decideSwitch(
  input: GenerationInput,
  plan: GenerationPlan,
  check: SwitchCheck,
  now: Date,
): SwitchDecision {
  const generation = plan.switchable;
  if (generation === undefined) return { switched: false, status: plan.status, view: plan.view };
  if (!check.accepted) {
    return { switched: false, status: plan.status, view: refusedSwitchView(input, generation, check.reason) };
  }
  return {
    switched: true,
    status: switchStatus(input.spec, plan.status, generation, now),
    view: deliveredView(input, generation),
  };
}
