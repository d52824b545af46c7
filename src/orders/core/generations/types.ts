// Plain input and output types of the generation state machine (see ../generations.ts for the rules).
import type { ConnectionCount, UseEvidence } from "../connections.ts";
import type { RotationWindow } from "./window.ts";

/** What a listing shows of a generation's account or access child. */
export type ChildState =
  | { readonly phase: "absent" }
  /** Listed, but not Ready yet, or Ready for an older spec (observedGeneration behind). */
  | { readonly phase: "pending" }
  /** Ready True with observedGeneration caught up. */
  | { readonly phase: "ready" }
  /**
   * Ready False with a refusal's reason (FailedCreateOrUpdate): the backend refused it; the operator's
   * message. `newPasswordAt` is set when a new password answers the refusal (a validation policy refused
   * this one): from then on the order mints a new generation instead.
   */
  | { readonly phase: "refused"; readonly message: string; readonly newPasswordAt?: Date | undefined }
  /** Marked for deletion; the topology operator has not let go yet. */
  | { readonly phase: "deleting" };

/** The generation's password Secret: missing, present without a usable password, or present with one. */
export type PasswordState = "absent" | "empty" | "present";

/**
 * The listed children of one password generation N, in the core's words: its password Secret, the child
 * that makes the account on the backend (a User) and the child that gives the account its rights on the
 * resource (a Permission on a vhost, a Grant on a database). A generation the listing lacks has all absent.
 */
export interface GenerationChildren {
  readonly generation: number;
  readonly password: PasswordState;
  readonly account: ChildState;
  readonly access: ChildState;
  /** The backend (RabbitmqCluster, MariaDB) its account or access child names; undefined with neither. */
  readonly backend?: string | undefined;
}

/** The order's rotation spec, defaults already resolved. */
export interface RotationSpec {
  /** spec.passwordGeneration (a value below 1 is read as 1). */
  readonly declaredGeneration: number;
  /** rotation.interval in milliseconds; 0 turns the schedule off. */
  readonly intervalMs: number;
  /** rotation.gracePeriod in milliseconds. */
  readonly gracePeriodMs: number;
  /** rotation.window: a scheduled rotation starts only inside one (window.ts); absent, when it falls due. */
  readonly window?: RotationWindow | undefined;
  /** What spreads the order's rotations over a window: its uid. */
  readonly seed?: string | undefined;
}

/** The rotation fields of the order's status. Absent fields are undefined; a generation of 0 means none. */
export interface RotationStatus {
  /** The live generation: the one the delivered Secret carries. */
  readonly passwordGeneration?: number | undefined;
  readonly lastRotation?: Date | undefined;
  readonly nextRotation?: Date | undefined;
  readonly previousPasswordGeneration?: number | undefined;
  readonly previousPasswordDeleteAt?: Date | undefined;
  /** The previous user's logins the backend had recorded at the switch; absent: no records were read. */
  readonly previousPasswordLogins?: number | undefined;
  /**
   * Logins of the previous user since the switch, the most any sweep pass has seen: the broker forgets
   * its records after a while, so a login once seen holds the sweep until the hold's end.
   */
  readonly previousPasswordLoginsSince?: number | undefined;
}

export interface GenerationInput {
  readonly spec: RotationSpec;
  readonly status: RotationStatus;
  /** Every generation that has at least one listed child, in any order. */
  readonly children: readonly GenerationChildren[];
  /** The resource on the backend (the vhost, the database), for messages. */
  readonly resource: string;
  /** The backend account of generation N, for messages. */
  readonly userName: (generation: number) => string;
  /** How the kind names its pieces in messages. */
  readonly words: ViewWords;
  /** What the delivered Secret carries; absent, the status is taken at its word (as "none"). */
  readonly delivered?: DeliveredEvidence | undefined;
  /** The sweep's hold and the backend's answer for the previous user; absent, the sweep does not wait. */
  readonly sweepHold?: SweepHold | undefined;
  /**
   * The backend the ControlPlane names now. A generation whose children name another one is misplaced:
   * never continued, and a live one is moved by a rotation (a migration). Absent: every generation is placed.
   */
  readonly backend?: string | undefined;
  /**
   * When the pass was queued: whether a rotation window has closed is judged then, so that a pass
   * queued at its moment inside the window and handed out after it closed still starts the rotation.
   * Absent (or later than now): now.
   */
  readonly queuedAt?: Date | undefined;
}

/**
 * The words of the resource condition's messages, in the kind's terms: for a RabbitMQVhost, "the topology
 * operator", "vhost", "permission" and "the broker".
 */
export interface ViewWords {
  /** Who serves the children: "the topology operator". */
  readonly operator: string;
  /** The resource on the backend: "vhost". */
  readonly resource: string;
  /** The account child's kind: "User". */
  readonly accountKind: string;
  /** The access child: "permission"; and its kind, "Permission". */
  readonly access: string;
  readonly accessKind: string;
  /** The backend: "the broker". */
  readonly backend: string;
  /** How a failed write names a piece of a generation: "creating the <piece> of generation N failed". */
  readonly pieces: Readonly<Record<ChildKind, string>>;
}

/** A piece of a password generation (see GenerationChildren). */
export type ChildKind = "passwordSecret" | "account" | "access";

/**
 * One write the reconciler performs, in list order. Creating a password Secret means generating a fresh
 * password for it; creating an account child means one that imports generation N's password Secret;
 * creating an access child means the kind's rights on the resource for generation N's account.
 */
export interface ChildAction {
  readonly op: "create" | "delete";
  readonly kind: ChildKind;
  readonly generation: number;
  /** A delete whose completion nothing waits for: the child's removal need not bring a pass. */
  readonly quiet?: boolean;
}

/** The resource condition (VhostReady) as the generations see it (the container child's gate comes before). */
export interface ResourceView {
  readonly status: "True" | "False";
  readonly reason: "Provisioned" | "WaitingForAccount" | "Failed";
  readonly message: string;
}

/** Why a new generation is wanted. */
export type RotationCause =
  | "declared"
  | "schedule"
  | "lostPassword"
  | "lostAccount"
  | "lostAccess"
  /** The live generation's children name a backend the ControlPlane no longer names: a migration. */
  | "moved";

export type TargetDecision =
  /** No generation is live yet: mint the declared one. */
  | { readonly kind: "first"; readonly generation: number }
  /** A successor above the live generation is in flight: carry on with it. */
  | { readonly kind: "continue"; readonly generation: number }
  /** Start a new generation. */
  | { readonly kind: "rotate"; readonly generation: number; readonly causes: readonly RotationCause[] }
  /** A rotation is wanted, but a grace period runs. */
  | { readonly kind: "held"; readonly causes: readonly RotationCause[] }
  /** Nothing to do: the live generation stays. */
  | { readonly kind: "none" };

/** The outcome of a pre-switch check of the successor's credentials against the broker. */
export type SwitchCheck = { readonly accepted: true } | { readonly accepted: false; readonly reason: string };

/** How long past its delete time a superseded user may stay while it is used, and who uses it now. */
export interface SweepHold extends Omit<UseEvidence, "consumers"> {
  readonly holdMs: number;
  /** The backend's answer for the previous user; absent when it was not asked (the sweep goes ahead). */
  readonly consumers?: ConnectionCount | undefined;
}

export type DeliveredEvidence =
  /** The order's delivered Secret carries generation N's user. */
  | { readonly kind: "carries"; readonly generation: number }
  /** There is no delivered Secret of the order, or it carries none of its users: the status is all there is. */
  | { readonly kind: "none" }
  /** The delivered Secret could not be read: nothing may be deleted on this pass. */
  | { readonly kind: "unknown" }
  /**
   * The delivered Secret names a generation whose password Secret does not hold its password (edited
   * by hand, an old copy re-applied): the status stands and, as with "unknown", nothing may be deleted
   * on this pass; delivery writes the Secret again.
   */
  | { readonly kind: "unvouched" };
