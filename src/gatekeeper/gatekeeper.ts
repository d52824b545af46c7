// The plugins around one pass. `enter` runs the entry hooks (entry.ts) in entry order on the object as
// read and hands back a GatePass: the object the pass reconciles (a mutating entry's output, for this
// pass only) or the rejection of the first hook that threw. `exit` runs every plugin's exit hook
// (exit.ts), in exit order, on the original object and the status about to be written, and returns the
// status to write. `wrap` makes the exit hooks run on every pass, also when the pass wrote nothing or
// failed.
import type { Clock } from "../runtime/base/clock.ts";
import { TransientError } from "../runtime/base/errors.ts";
import type { Kube } from "../runtime/port/kube.ts";
import type { KubeObject } from "../runtime/port/kube-rest.ts";
import type { LogSink } from "../runtime/base/logging.ts";
import type { ExitContext, GatedKindName, GatekeeperPlugin, PassContext } from "./api.ts";
import { errorText } from "./containment.ts";
import { frozenReads } from "./copies.ts";
import { runEntryHooks } from "./entry.ts";
import { runExitHooks } from "./exit.ts";
import { gatedKinds, isGatedKind, type GatedKind } from "./kinds.ts";
import type { GatekeeperMetrics } from "./metrics.ts";
import type { Grouped } from "./order.ts";

export const GATEKEEPER_REJECTED = "GatekeeperRejected";

export interface GatekeeperOptions {
  plugins: Grouped<GatekeeperPlugin>;
  log: LogSink;
  /** `now` is handed to the plugins; `monotonic` times their hooks. */
  clock: Pick<Clock, "now" | "monotonic">;
  metrics?: GatekeeperMetrics | undefined;
  /** The retry of a rejected object: doubling from baseMs up to capMs. */
  backoff?: { baseMs: number; capMs: number };
  /** How long one hook may take (--gatekeeper-hook-timeout); default 10 s. */
  hookTimeoutMs?: number;
}

/** Where a pass runs: the object's cluster and port, the reconcile's logger, and whether it is a teardown. */
export interface PassTarget {
  cluster: string;
  kube: Kube;
  /** The management cluster's port, for an object on another cluster (else `kube` is that port). */
  management?: Kube | undefined;
  log: LogSink;
  teardown: boolean;
}

export interface Rejection {
  plugin: string;
  /** Names the plugin and carries its message (redacted). */
  message: string;
  retryAfterMs: number;
}

export class Gatekeeper {
  private readonly options: GatekeeperOptions;
  private readonly rejections = new Map<string, number>();

  constructor(options: GatekeeperOptions) {
    this.options = options;
  }

  /** A gatekeeper without plugins: every pass goes as if there were none. */
  static empty(log: LogSink, clock: Pick<Clock, "now" | "monotonic">): Gatekeeper {
    return new Gatekeeper({ plugins: { mandatory: [], default: [], custom: [] }, log, clock });
  }

  async enter(kindName: string, object: KubeObject, target: PassTarget): Promise<GatePass> {
    const kind = isGatedKind(kindName) ? gatedKinds[kindName] : undefined;
    const pass = new GatePass(this, kind, object, target);
    if (!kind) return pass;
    const key = rejectionKey(kindName, target.cluster, object);
    const entered = await runEntryHooks(this.options, kind, object, this.context(kind.name, target));
    if ("rejected" in entered) {
      pass.rejection = { ...entered.rejected, retryAfterMs: this.retryAfter(key) };
      return pass;
    }
    this.rejections.delete(key);
    pass.object = entered.object;
    return pass;
  }

  /** Runs every exit hook in exit order; returns the status to write and the first failure. */
  exit(
    kind: GatedKind,
    original: KubeObject,
    status: Record<string, unknown>,
    context: ExitContext,
    log: LogSink,
  ): Promise<{ status: Record<string, unknown>; failure: string | undefined }> {
    return runExitHooks(this.options, kind, original, status, context, log);
  }

  context(kind: GatedKindName, target: PassTarget): PassContext {
    return {
      kind,
      cluster: target.cluster,
      kube: frozenReads(target.kube),
      management: frozenReads(target.management ?? target.kube),
      log: target.log,
      clock: this.options.clock,
      teardown: target.teardown,
    };
  }

  private retryAfter(key: string): number {
    const { baseMs, capMs } = this.options.backoff ?? { baseMs: 1_000, capMs: 300_000 };
    const failures = this.rejections.get(key) ?? 0;
    this.rejections.set(key, failures + 1);
    return Math.min(capMs, baseMs * 2 ** failures);
  }
}

function rejectionKey(kind: string, cluster: string, object: KubeObject): string {
  return `${kind}/${cluster}/${object.metadata?.namespace ?? ""}/${object.metadata?.name ?? ""}`;
}

/** One pass between its entry and its exit. */
export class GatePass {
  /** The object the pass reconciles: the entry hooks' output, or the object as read. */
  object: KubeObject;
  rejection: Rejection | undefined;
  private exited = false;
  private exitFailure: string | undefined;
  private readonly gatekeeper: Gatekeeper;
  private readonly kind: GatedKind | undefined;
  private readonly original: KubeObject;
  private readonly target: PassTarget;

  constructor(gatekeeper: Gatekeeper, kind: GatedKind | undefined, original: KubeObject, target: PassTarget) {
    this.gatekeeper = gatekeeper;
    this.kind = kind;
    this.original = original;
    this.object = original;
    this.target = target;
  }

  /**
   * The exit hooks on the status about to be written; returns the status to write. Runs once per pass:
   * a second call returns `status` as given.
   */
  async exit<S extends object>(status: S, failed?: unknown): Promise<S> {
    if (!this.kind || this.exited) return status;
    this.exited = true;
    const outcome = this.rejection ? "rejected" : failed !== undefined ? "failed" : "succeeded";
    const error = this.rejection?.message ?? (failed !== undefined ? errorText(failed) : undefined);
    const context: ExitContext = { ...this.gatekeeper.context(this.kind.name, this.target), outcome, error };
    const out = await this.gatekeeper.exit(
      this.kind,
      this.original,
      status as Record<string, unknown>,
      context,
      this.target.log,
    );
    this.exitFailure = out.failure;
    return out.status as S;
  }

  /**
   * Runs `pass`, then the exit hooks if the pass wrote no status (with the status as read; what they
   * return is not written). An exit hook that threw fails the pass once its status is written.
   */
  async wrap<T>(pass: () => Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await pass();
    } catch (error) {
      await this.exit(this.original["status"] ?? {}, error);
      throw error;
    }
    await this.exit(this.original["status"] ?? {});
    if (this.exitFailure) throw new TransientError(this.exitFailure);
    return result;
  }
}
