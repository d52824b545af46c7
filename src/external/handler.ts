// What one kind of resource outside Kubernetes supplies to the engine: how to read it, whose it is,
// where its endpoint is (a broker, a server), what it asks for, how to bring the endpoint there and
// how to take it away, how the endpoint's failures read, and its conditions. A backend (the seven
// rabbitmq.com kinds, the four SQL kinds) builds its kinds' handlers from one function of its own.
import type { z } from "zod";
import type { KindRef, ObjectMeta } from "../api/index.ts";
import type { ExternalDeps } from "./deps.ts";

export interface ExternalObject {
  metadata: ObjectMeta;
  spec: object;
  status?: unknown;
}

/** A condition the pass sets; its time is the status's business. */
export interface ConditionUpdate {
  type: string;
  status: "True" | "False" | "Unknown";
  reason: string;
  message?: string;
}

/** served: ours. declined: someone else's. undecided: what would decide it is missing (ours only if claimed). */
export type Ownership = { decision: "served" } | { decision: "declined" | "undecided"; reason: string };

/**
 * The object's endpoint: a client to it, or why there is none (gone: nothing there holds the object, as
 * when the endpoint itself is gone, or the object never reached it).
 */
export type Endpoint<C> =
  | { outcome: "ready"; client: C; /** Names the endpoint in the memo's hash. */ key: string }
  | { outcome: "waiting" | "refused" | "gone"; reason: string };

/** The desired state of an object at its endpoint, or why there is none yet (waiting) or ever (invalid). */
export type Desired<S, C = unknown> =
  | {
      outcome: "ready";
      spec: S;
      /** resourceVersions of the Secrets the state was read from, part of the memo's version. */
      secretVersion?: string;
      /**
       * The uid of another object the state was read from (a Permission's User), part of the memo's
       * version: a User made again is a new user on the broker, which holds none of the old one's
       * permissions, so what was applied for the old one counts for nothing.
       */
      sourceUid?: string;
      /** Values that must never reach a condition or a log line (a password, its hash). */
      secrets?: readonly string[];
      /** Status fields written on success (a User's username and credentials). */
      statusFields?: Record<string, unknown>;
      /** Removes what a new declaration replaces (a User's previous username); run after it. */
      supersedes?: (client: C) => Promise<void>;
    }
  /** `reason` names what is missing; `conditionReason` replaces the backend's failure reason (NotOwned). */
  | { outcome: "waiting"; reason: string; conditionReason?: string }
  | { outcome: "invalid"; reason: string }
  /** Not yet, and nothing to report: another object this one needs is on its way (no status written). */
  | { outcome: "deferred"; reason: string; retryAfterMs: number };

export type ReadyDesired<S, C = unknown> = Extract<Desired<S, C>, { outcome: "ready" }>;

/** What the memo knows of the object: `known`, its state was applied by this process. */
export interface Recall {
  known: boolean;
  /** The status says Ready at the current generation: some process brought the endpoint there. */
  readyAtGeneration: boolean;
}

/** What a sync did: the Ready message (where the backend's conditions carry one). */
export interface Synced {
  detail?: string | undefined;
  /**
   * When the endpoint's answer was read, where that was before the pass (a listing of the period): the
   * next verification is due a period after it; default the pass's start.
   */
  verifiedAt?: number | undefined;
  /**
   * The endpoint no longer held the object the memo vouched for: it may have lost everything it held
   * (restarted empty), so every object of it is looked at now (lost.ts).
   */
  missing?: boolean;
}

/**
 * A failed request to the endpoint, its message cleaned of every known secret. refused: the endpoint's
 * verdict on the request (a Warning Event), retried with a backoff that doubles per refusal in a row;
 * failed: no usable answer (no Event, the condition says it), retried after `retryAfterMs`; waiting:
 * what the request needs is not there yet (a Normal Event), looked at again after `retryAfterMs`.
 */
export type Failure =
  | { verdict: "refused"; message: string }
  | { verdict: "failed"; message: string; retryAfterMs: number }
  | { verdict: "waiting"; message: string; retryAfterMs: number; conditionReason?: string };

/** The conditions of a backend's kinds. */
export interface Conditions {
  /** Applied: Ready and whatever else the kind reports on success. */
  ready(detail: string | undefined): ConditionUpdate[];
  /** Ready False; `reason` defaults to the backend's failure reason. */
  notReady(message: string, reason?: string): ConditionUpdate;
  /** Ready False on a deleted object still held by the finalizer. */
  notDeleted(message: string): ConditionUpdate;
  /** Conditions besides Ready when a sync failed (a User's PasswordSynced). */
  syncFailed?(message: string): ConditionUpdate[];
  /** The status after a pass, from the stored one; `success` on a pass that applied the state. */
  next(
    current: unknown,
    updates: readonly ConditionUpdate[],
    generation: number | undefined,
    nowMs: number,
    success: { fields: Record<string, unknown> } | undefined,
  ): Record<string, unknown> & { conditions?: unknown[] };
}

export interface ExternalHandler<D extends ExternalDeps, O extends ExternalObject, S, C> {
  kind: KindRef;
  schema: z.ZodType<O>;
  /** Names the controller in log lines, e.g. "built-in topology controller". */
  controller: string;
  /** Names the endpoint in messages and log lines: "broker", "server". */
  endpointName: string;
  finalizer: string;
  /**
   * Ready's reasons beyond `conditions.notReady`'s own: an object that fails its schema, and one whose
   * Secrets lie outside --secret-namespaces. The first is also the TerminalError's.
   */
  reasons: { invalidSpec: string; outOfReach: string };
  conditions: Conditions;
  /** Off entirely: nothing is read or written (the upstream operator serves the kind). */
  enabled(deps: D): boolean;
  ownership(deps: D, object: O): Promise<Ownership>;
  /** Whether a served object holds the finalizer (a backend may ask for it by policy). */
  wantsFinalizer(object: O): boolean;
  /** The namespaces whose Secrets the object needs (a teardown needs them where `teardownReadsSecrets`). */
  secretNamespaces(object: O): string[];
  teardownReadsSecrets: boolean;
  /** What an object out of reach waits for, after the namespaces: "nothing is declared … until it is added". */
  outOfReachNote: string;
  /** spec.retryInterval, say: the object's own wait, which replaces every interval of the backend. */
  retryInterval?(object: O): number | undefined;
  /** The first field that cannot be honoured, worded for the condition; undefined when there is none. */
  unsupported?(object: O): string | undefined;
  endpoint(deps: D, object: O): Promise<Endpoint<C>>;
  desired(deps: D, object: O): Promise<Desired<S, C>>;
  /** Brings the endpoint to the desired state, reading it back as far as `recall` asks. */
  sync(deps: D, client: C, object: O, desired: ReadyDesired<S, C>, recall: Recall): Promise<Synced>;
  /** Takes away what a deleted object declared (or leaves it, by the object's policy). */
  remove(deps: D, client: C, object: O): Promise<void>;
  /** undefined when `error` is no failure of the endpoint (a bug, or the Kubernetes API). */
  failure(deps: D, error: unknown, secrets: readonly string[], teardown: boolean): Failure | undefined;
}
