// The resource condition (VhostReady) as the generations see it, in the kind's words.
import { childrenOf, exists } from "./children.ts";
import { conditionTime } from "../../../runtime/base/conditions.ts";
import type { SweepHeld } from "./cleanup.ts";
import type { MintOutcome } from "./mint.ts";
import { liveGeneration } from "./target.ts";
import type { GenerationInput, TargetDecision, ResourceView } from "./types.ts";

function failed(input: GenerationInput, piece: "account" | "access", generation: number, message: string) {
  const { words } = input;
  const user = input.userName(generation);
  const what =
    piece === "account"
      ? `user "${user}"`
      : `the ${words.access} of user "${user}" on ${words.resource} "${input.resource}"`;
  return `${words.operator} cannot create ${what}: ${message}`;
}

/** The view of the live generation alone. */
function liveView(input: GenerationInput, live: number): ResourceView {
  const c = childrenOf(input.children, live);
  if (c.account.phase === "refused") {
    return { status: "False", reason: "Failed", message: failed(input, "account", live, c.account.message) };
  }
  if (c.access.phase === "refused") {
    const message = failed(input, "access", live, c.access.message);
    return { status: "False", reason: "Failed", message };
  }
  const user = input.userName(live);
  if (!exists(c.account) || !exists(c.access)) {
    const gone = exists(c.account) ? input.words.accessKind : input.words.accountKind;
    const message = `the ${gone} of the delivered user "${user}" is gone; a new user replaces it`;
    return { status: "False", reason: "WaitingForAccount", message };
  }
  return deliveredView(input, live);
}

function waitingForFirst(input: GenerationInput, generation: number, mint: MintOutcome): ResourceView {
  const { words } = input;
  const user = input.userName(generation);
  if (mint.kind === "refused") {
    return {
      status: "False",
      reason: "Failed",
      message: failed(input, mint.piece, generation, mint.message),
    };
  }
  const message =
    mint.kind === "complete"
      ? `user "${user}" and its ${words.access} are Ready; checking that ${words.backend} accepts the user`
      : mint.waitingFor === "strays"
        ? `waiting for the users of superseded generations to be removed before user "${user}" is created`
        : mint.waitingFor === "removal"
          ? `waiting for an unusable piece of user "${user}" to be removed before it is created again`
          : mint.waitingFor === "account"
            ? `waiting for ${words.operator} to report user "${user}" Ready`
            : `waiting for ${words.operator} to report the ${words.access} of user "${user}" Ready`;
  return { status: "False", reason: "WaitingForAccount", message };
}

/** The view after this pass's decisions, before any switch. */
export function provisionView(
  input: GenerationInput,
  target: TargetDecision,
  mint: MintOutcome | undefined,
): ResourceView {
  if (target.kind === "first" && mint !== undefined) return waitingForFirst(input, target.generation, mint);
  const live = liveGeneration(input.status);
  const base = liveView(input, live);
  const previous = input.status.previousPasswordGeneration;

  if (previous !== undefined && input.status.previousPasswordDeleteAt === undefined) {
    const message = `${base.message}; user "${input.userName(previous)}" stays until the delivered Secret carries user "${input.userName(live)}"`;
    return { ...base, message };
  }
  if (target.kind === "held" && previous !== undefined) {
    const message = `${base.message}; a new user is created once user "${input.userName(previous)}" is removed after its grace period`;
    return { ...base, message };
  }
  if ((target.kind !== "continue" && target.kind !== "rotate") || mint === undefined) return base;

  const successor = `user "${input.userName(target.generation)}"`;
  if (mint.kind === "refused") {
    const message =
      `${failed(input, mint.piece, target.generation, mint.message)}; the delivered user ` +
      `"${input.userName(live)}" stays in use until spec.passwordGeneration is raised above ${target.generation}`;
    return { status: "False", reason: "Failed", message };
  }
  if (mint.kind === "minting")
    return { ...base, message: `${base.message}; its successor ${successor} is being created` };
  const after =
    previous !== undefined
      ? `takes over once user "${input.userName(previous)}" is removed after its grace period`
      : `is checked against ${input.words.backend} before it takes over`;
  return { ...base, message: `${base.message}; its successor ${successor} is Ready and ${after}` };
}

/**
 * The view when the rotation to `generation` waits for the namespace's bound on rotations
 * (rotation-rate.ts): the live generation stays delivered.
 */
export function deferredRotationView(
  input: GenerationInput,
  generation: number,
  bound: string,
): ResourceView {
  const base = liveView(input, liveGeneration(input.status));
  return {
    ...base,
    message: `${base.message}; its successor user "${input.userName(generation)}" waits: ${bound}`,
  };
}

/** The view when the caller's check refused a Ready successor: the live generation stays delivered. */
export function refusedSwitchView(input: GenerationInput, generation: number, reason: string): ResourceView {
  const live = liveGeneration(input.status);
  const user = input.userName(generation);
  if (live === 0) {
    return {
      status: "False",
      reason: "WaitingForAccount",
      message: `user "${user}" is Ready but not delivered yet: ${reason}`,
    };
  }
  const base = liveView(input, live);
  return {
    ...base,
    message: `${base.message}; its successor user "${user}" is not switched to yet: ${reason}`,
  };
}

/** The view once generation N is delivered. */
export function deliveredView(input: GenerationInput, generation: number): ResourceView {
  return {
    status: "True",
    reason: "Provisioned",
    message: `${input.words.resource} "${input.resource}" and user "${input.userName(generation)}" exist on ${input.words.backend}`,
  };
}

/**
 * The view when the broker accepted a successor that the delivered Secret does not carry yet (its
 * delivery waits or failed): the live generation stays the delivered one.
 */
export function undeliveredSwitchView(input: GenerationInput, generation: number): ResourceView {
  const live = liveGeneration(input.status);
  const user = input.userName(generation);
  if (live === 0) {
    const base = deliveredView(input, generation);
    return { ...base, message: `${base.message}; the delivered Secret does not carry user "${user}" yet` };
  }
  const base = liveView(input, live);
  return {
    ...base,
    message: `${base.message}; its successor user "${user}" is Ready and takes over once the delivered Secret carries it`,
  };
}

/** The words that mark a held sweep in the resource condition's message (its SweepHeld event is once). */
export const SWEEP_HELD_MARK = "is kept past its grace period while";

/** The view while the sweep waits for the previous user's last consumer. */
export function heldSweepView(input: GenerationInput, base: ResourceView, held: SweepHeld): ResourceView {
  const user = `user "${input.userName(held.generation)}"`;
  const { consumers } = held;
  const logins = held.loginsSinceSwitch ?? 0;
  const records = typeof logins === "object" ? logins.unknown : undefined;
  const pods = held.podsBeforeSwitch ?? [];
  const who: string[] = [];
  if (!consumers.known) who.push(`${input.words.backend} cannot tell who uses it (${consumers.reason})`);
  else if (consumers.count > 0)
    who.push(`${plural(consumers.count, "connection")} still use${consumers.count === 1 ? "s" : ""} it`);
  if (records !== undefined) who.push(`its login records cannot be read (${records})`);
  else if (typeof logins === "number" && logins > 0)
    who.push(`it logged in ${plural(logins, "time")} since the switch`);
  if (pods.length > 0)
    who.push(
      `${podList(pods)}, started before the switch, read${pods.length === 1 ? "s" : ""} the delivered Secret`,
    );
  return {
    ...base,
    message: `${base.message}; the superseded ${user} ${SWEEP_HELD_MARK} ${who.join(", ")}, until ${conditionTime(held.until.getTime())} at the latest`,
  };
}

const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`;

/** The pods a held sweep waits for, at most five by name. */
function podList(pods: readonly string[]): string {
  const named = pods.slice(0, 5).map((p) => `pod ${p}`);
  const more = pods.length > 5 ? ` and ${pods.length - 5} more` : "";
  return `${named.join(", ")}${more}`;
}
