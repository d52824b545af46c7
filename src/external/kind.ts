// What a backend supplies to the engine, in crossplane-runtime's words: one Connector for the backend
// (what its controllers are called, what its endpoint is called, how its failures and conditions read,
// which Secrets and which endpoint object wake its objects, its lane) and one ExternalKind per kind
// (how to read it, whose it is, its endpoint, what it asks for, how to bring the endpoint there and
// how to take it away). A backend's kinds each carry their connector.
import type { z } from "zod";
import type { KindRef, ObjectMeta } from "../api/index.ts";
import type { DesiredCondition, StatusRules } from "../runtime/base/conditions.ts";
import type { Kind, KubeObject } from "../runtime/port/kube-rest.ts";
import type { WatchSpec } from "../runtime/process/controller-declaration.ts";
import type { Manager } from "../runtime/process/manager.ts";
import type { ExternalDeps } from "./deps.ts";
import type { EndpointWords } from "./lanes.ts";

export interface ExternalObject {
  metadata: ObjectMeta;
  spec: object;
  status?: unknown;
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
  | { verdict: "refused"; message: string; conditionReason?: string }
  | { verdict: "failed"; message: string; retryAfterMs: number }
  | { verdict: "waiting"; message: string; retryAfterMs: number; conditionReason?: string };

/** The conditions of a backend's kinds. */
export interface Conditions {
  /** Applied: Ready and whatever else the kind reports on success. */
  ready(detail: string | undefined): DesiredCondition[];
  /** Ready False; `reason` defaults to the backend's failure reason. */
  notReady(message: string, reason?: string): DesiredCondition;
  /** Ready False on a deleted object still held by the finalizer. */
  notDeleted(message: string): DesiredCondition;
  /** Conditions besides Ready when a sync failed (a User's PasswordSynced). */
  syncFailed?(message: string): DesiredCondition[];
}

/** The caches a kind's watches read. */
export type Caches = Pick<Manager, "cachedList" | "cachedByIndex">;

/** What a backend supplies once for all its kinds. */
export interface Connector<D extends ExternalDeps> {
  /** Its controllers are named `<name>-<plural>`: "topology", "sql". */
  name: string;
  /** Names the controller in log lines, e.g. "built-in topology controller". */
  controller: string;
  /** Names the endpoint in messages and log lines: "broker", "server". */
  endpointName: string;
  /**
   * Ready's reasons beyond `conditions.notReady`'s own: an object that fails its schema, and one whose
   * Secrets lie outside --secret-namespaces. The first is also the TerminalError's.
   */
  reasons: { invalidSpec: string; outOfReach: string };
  /** How a status is written (src/runtime/base/conditions.ts); `observedOnSuccess`: the generation only then. */
  status: StatusRules & { observedOnSuccess: boolean };
  /** Off entirely: nothing is read or written (the upstream operator serves the kinds). */
  enabled(deps: D): boolean;
  teardownReadsSecrets: boolean;
  /** What an object out of reach waits for, after the namespaces: "nothing is declared … until it is added". */
  outOfReachNote: string;
  /**
   * undefined when `error` is no failure of the endpoint (a bug, or the Kubernetes API); `teardown`: the
   * finalizer a failed teardown holds.
   */
  failure(
    deps: D,
    error: unknown,
    secrets: readonly string[],
    teardown?: { finalizer: string },
  ): Failure | undefined;
  /** The label of the Secrets whose change wakes the objects that read them. */
  secretLabel: string;
  /** An update of an object that changed nothing but the finalizers and left its own on wakes nothing. */
  quietOwnFinalizer: boolean;
  /** The object that declares an endpoint: its change wakes the cached objects `wakes` picks. */
  endpointObject: {
    kind: Kind;
    update?: (previous: KubeObject, object: KubeObject) => boolean;
    wakes(endpoint: KubeObject): (object: KubeObject) => boolean;
  };
  /** An object's lane, from its cached spec ("" for the common one), and the words of its slow Event. */
  lane: { of(object: KubeObject | undefined): string; words: EndpointWords };
}

/** One kind as the engine passes its objects. */
export interface ExternalKind<D extends ExternalDeps, O extends ExternalObject, S, C> {
  connector: Connector<D>;
  kind: KindRef;
  schema: z.ZodType<O>;
  finalizer: string;
  conditions: Conditions;
  ownership(deps: D, object: O): Promise<Ownership>;
  /** Whether a served object holds the finalizer (a backend may ask for it by policy). */
  wantsFinalizer(object: O): boolean;
  /** The namespaces whose Secrets the object needs (a teardown needs them where `teardownReadsSecrets`). */
  secretNamespaces(object: O): string[];
  /**
   * The labelled Secrets whose change wakes the object, read from it as the cache holds it (asked of
   * every cached object of the kind on each change of one).
   */
  secretsOf(object: unknown): { namespace: string; name: string }[];
  /** What else wakes its objects, besides their own changes, their Secrets and their endpoint object. */
  watches?(caches: Caches): WatchSpec[];
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
}

/** A backend's kinds side by side, whatever their objects and states. */
export type AnyExternalKind<D extends ExternalDeps, C> = ExternalKind<D, ExternalObject, unknown, C>;
