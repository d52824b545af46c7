/**
 * Password generations of an order: the rotation state machine, as pure functions of the
 * listed children, the order's spec and status, and an injected clock. They return decisions and
 * writes; the reconciler performs them.
 *
 * Rules (seed 001, Rotation; DESIGN.md, "Rotation decides from evidence"):
 * - Evidence first: the generation the delivered Secret carries is the live one, whatever the status
 *   says (fromEvidence); the status only reports it. A generation the Secret carries is never deleted,
 *   and when the Secret cannot be read, nothing is deleted at all.
 * - A rotation mints a new user (generation N+1) beside the live one (N), never a new password for N.
 * - Target: with nothing live, the declared generation (at least 1), or a higher one in flight. Otherwise
 *   the highest successor in flight (its account child exists; a refused one only while
 *   spec.passwordGeneration does not exceed it). Else, while a grace period runs (previous* set, until
 *   the sweep clears them), nothing new starts, so the order holds at most two users. Else
 *   max(declared, live+1) when the declared generation is above the live one, when lastRotation +
 *   interval <= now (interval 0: schedule off; with a rotation window, the order's moment inside the
 *   first window open then: generations/window.ts), or when a piece of the live generation is gone
 *   (password Secret gone or empty, account or access child gone or being deleted).
 * - Pruning: every generation other than the live one, the target and the previous one is deleted.
 * - Minting: password Secret (created once), account child, then the access child once the account
 *   child is Ready. A new account child waits until those of pruned generations are gone; a target
 *   whose password is lost under an existing account child is taken down and minted afresh.
 *   (The account child is a User; the access child a Permission or a Grant: see generations/types.ts.)
 * - Switch: once the target's account and access children are Ready and the caller's check of the credentials
 *   against the broker passes, the target is delivered; only once the delivered Secret carries it does
 *   the live generation become the previous one (deleted a grace period later), with lastRotation = now
 *   and nextRotation = now + interval. A raise goes straight to the raised generation.
 * - Migration: a generation whose children name another backend than the ControlPlane's is misplaced. A
 *   live one is moved by a rotation (cause "moved") to a new generation on the ControlPlane's backend,
 *   numbered above every misplaced one; one in flight is abandoned (pruned) and never continued.
 * - Sweep after previousPasswordDeleteAt: while the backend lists sessions of the previous user, it
 *   waits, at most the hold; then access and account children first; the password Secret and the
 *   previous* fields once the account child is gone (a later pass).
 * - Requeue at the next deadline (see untilDeadline).
 *
 * A pass: `supersededToAsk` (ask the backend who uses that user) → `planGenerations` → perform
 * `plan.actions` in order → if `plan.switchable` is set, check the successor against the broker and call
 * `decideSwitch` → deliver → write the status → `untilDeadline`.
 */
import { childrenOf } from "./generations/children.ts";
import {
  pruneActions,
  sweepDue,
  sweepPrevious,
  wholeSeconds,
  type SweepHeld,
} from "./generations/cleanup.ts";
import { fromEvidence } from "./generations/evidence.ts";
import { mintTarget, type MintOutcome } from "./generations/mint.ts";
import { switchStatus } from "./generations/schedule.ts";
import {
  chooseTarget,
  graceRunning,
  highestSpent,
  liveGeneration,
  nextRotationOf,
} from "./generations/target.ts";
import type {
  ChildAction,
  GenerationInput,
  RotationStatus,
  SwitchCheck,
  ResourceView,
  TargetDecision,
} from "./generations/types.ts";
import {
  deliveredView,
  heldSweepView,
  provisionView,
  refusedSwitchView,
  undeliveredSwitchView,
} from "./generations/view.ts";

export * from "./generations/types.ts";
export {
  childStateOf,
  passwordStateOf,
  topologyReadiness,
  type ChildObject,
  type ChildReadiness,
} from "./generations/children.ts";
export { chooseTarget, lostPieces, nextRotationOf, placed } from "./generations/target.ts";
export {
  pruneActions,
  startGrace,
  sweepPrevious,
  type SweepHeld,
  type SweepResult,
} from "./generations/cleanup.ts";
export { fromEvidence } from "./generations/evidence.ts";
export { deferredRotationView, SWEEP_HELD_MARK } from "./generations/view.ts";
export { mintTarget, type MintOutcome, type MintResult } from "./generations/mint.ts";
export { sweepUnderWay, switchStatus, untilDeadline } from "./generations/schedule.ts";

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
  /** Set while the sweep of the previous generation waits for its last consumer. */
  readonly held?: SweepHeld | undefined;
  /** When the target's password, refused by a validation policy, gives way to a new generation. */
  readonly newPasswordAt?: Date | undefined;
  /** The previous generation whose sweep this pass completes (its fields cleared). */
  readonly swept?: number | undefined;
}

/** The rotation status the evidence supports: the input's status, corrected by the delivered Secret. */
function evidenced(input: GenerationInput, now: Date): RotationStatus {
  return input.delivered
    ? fromEvidence(input.spec, input.status, input.children, input.delivered, now)
    : input.status;
}

/**
 * The superseded generation whose sweep is due on this pass: the caller asks the backend who still
 * uses its user and passes the answer as `sweepHold.consumers`. Undefined between a sweep and the next
 * switch, so the question costs one backend read per pass only while a sweep is due.
 */
export function supersededToAsk(input: GenerationInput, now: Date): number | undefined {
  return sweepDue(evidenced(input, now), now);
}

function targetGeneration(target: TargetDecision): number | undefined {
  return target.kind === "first" || target.kind === "continue" || target.kind === "rotate"
    ? target.generation
    : undefined;
}

export function planGenerations(input: GenerationInput, now: Date): GenerationPlan {
  const { spec, children } = input;
  const known = evidenced(input, now);
  const live = liveGeneration(known);
  // A live generation without lastRotation (status lost in part) starts its schedule now.
  const anchored: RotationStatus =
    live > 0 && known.lastRotation === undefined
      ? { ...known, lastRotation: wholeSeconds(now.getTime()) }
      : known;
  // A window is judged open or closed as of when the pass was queued (never later than now).
  const asOf = input.queuedAt !== undefined && input.queuedAt < now ? input.queuedAt : now;
  const target = chooseTarget(spec, anchored, children, now, input.backend, asOf);
  const goal = targetGeneration(target);

  const keep = new Set<number>();
  if (live > 0) keep.add(live);
  if (goal !== undefined) keep.add(goal);
  if (graceRunning(anchored)) keep.add(anchored.previousPasswordGeneration ?? 0);
  // The spent generation stays until a newer one is live: its refusal is what puts the next one above it.
  const spent = highestSpent(children, live, now);
  if (spent > 0) keep.add(spent);
  const pruned = pruneActions(children, keep);

  const sweep = sweepPrevious(anchored, children, now, input.sweepHold);
  // A successor in flight was started by the moment the status shows: its window is judged as of then,
  // so a rotation still under way after its window closed does not show next window's moment meanwhile.
  const startedAt = target.kind === "continue" ? anchored.nextRotation : undefined;
  const shownAsOf = startedAt !== undefined && startedAt < asOf ? startedAt : asOf;
  const status = {
    ...sweep.status,
    nextRotation: nextRotationOf(spec, sweep.status.lastRotation, shownAsOf),
  };

  let mint: MintOutcome | undefined;
  const minted: ChildAction[] = [];
  if (goal !== undefined) {
    const result = mintTarget(childrenOf(children, goal));
    const strayAccounts = children.some((c) => !keep.has(c.generation) && c.account.phase !== "absent");
    if (strayAccounts && result.actions.some((a) => a.op === "create" && a.kind === "account")) {
      // A new account child waits until the pruned ones are gone: the order never holds more than two.
      mint = { kind: "minting", waitingFor: "strays" };
    } else {
      mint = result.outcome;
      minted.push(...result.actions);
    }
  }
  // A successor in flight during a grace period waits for the sweep before it takes over.
  const switchable = mint?.kind === "complete" && !graceRunning(status) ? goal : undefined;
  let actions = [...pruned, ...sweep.actions, ...minted];
  // Without the delivered Secret's word, any generation but the target may be the one a consumer holds.
  if (input.delivered?.kind === "unknown" || input.delivered?.kind === "unvouched")
    actions = actions.filter((a) => a.op === "create" || a.generation === goal);
  const view = provisionView({ ...input, status: anchored }, target, mint);
  const goalAccount = goal !== undefined ? childrenOf(children, goal).account : undefined;
  return {
    target,
    actions,
    status,
    switchable,
    view: sweep.held ? heldSweepView({ ...input, status: anchored }, view, sweep.held) : view,
    held: sweep.held,
    newPasswordAt: goalAccount?.phase === "refused" ? goalAccount.newPasswordAt : undefined,
    swept:
      graceRunning(anchored) && !graceRunning(sweep.status) ? anchored.previousPasswordGeneration : undefined,
  };
}

export interface SwitchDecision {
  /** The generation to deliver now in place of the live one; the switch is done once it is delivered. */
  readonly switchTo?:
    | {
        readonly generation: number;
        /** The status once the delivered Secret carries it (the grace period is started then). */
        readonly status: RotationStatus;
        /** The resource condition once it is delivered. */
        readonly view: ResourceView;
      }
    | undefined;
  /** The status of this pass until then: the live generation stays the delivered one. */
  readonly status: RotationStatus;
  readonly view: ResourceView;
}

/**
 * Completes a pass whose plan is switchable. `check` is the caller's verdict on whether the broker
 * accepts the successor's credentials (pass `{ accepted: true }` to switch on Ready alone); its reason
 * lands in VhostReady's message, so it must not carry a secret. An accepted successor is not the
 * delivered generation yet: the status names it only once the delivered Secret carries it.
 */
export function decideSwitch(
  input: GenerationInput,
  plan: GenerationPlan,
  check: SwitchCheck,
  now: Date,
): SwitchDecision {
  const generation = plan.switchable;
  if (generation === undefined) return { status: plan.status, view: plan.view };
  const known = { ...input, status: plan.status };
  if (!check.accepted) {
    return { status: plan.status, view: refusedSwitchView(known, generation, check.reason) };
  }
  return {
    switchTo: {
      generation,
      status: switchStatus(input.spec, plan.status, generation, now),
      view: deliveredView(input, generation),
    },
    status: plan.status,
    view: undeliveredSwitchView(known, generation),
  };
}
