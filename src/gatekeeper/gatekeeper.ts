// The plugins around one pass. `enter` runs the entry hooks in entry order on the object as read and
// hands back a GatePass: the object the pass reconciles (a mutating entry's output, for this pass only)
// or the rejection of the first hook that threw. `exit` runs every plugin's exit hook, in exit order, on
// the original object and the status about to be written, and returns the status to write. `wrap`
// makes the exit hooks run on every pass, also when the pass wrote nothing or failed.
import type { Clock } from "../runtime/base/clock.ts";
import { TransientError } from "../runtime/base/errors.ts";
import type { Kube } from "../runtime/port/kube.ts";
import type { KubeObject } from "../runtime/port/kube-rest.ts";
import type { LogSink } from "../runtime/base/logging.ts";
import { deepEqual } from "../runtime/base/conditions.ts";
import { redactString } from "../runtime/base/redact.ts";
import type {
  ExitContext,
  GatedKindName,
  GatekeeperPlugin,
  MutatingPlugin,
  PassContext,
  ValidatingPlugin,
} from "./api.ts";
import { inPluginScope } from "./containment.ts";
import { copyOf, frozenCopy, frozenReads } from "./copies.ts";
import { gatedKinds, isGatedKind, type GatedKind } from "./kinds.ts";
import type { GatekeeperMetrics, InvocationResult } from "./metrics.ts";
import { entryOrder, exitOrder, type Group, type Grouped } from "./order.ts";
import { entryOutputProblem, exitOutputProblem } from "./schema-check.ts";

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

/** A hook that did not settle within its deadline. */
class HookTimeout extends Error {
  constructor(ms: number) {
    super(`it did not answer within ${ms / 1000} s`);
  }
}

/**
 * Runs a hook of `plugin` with a deadline: past it the hook counts as failed and whatever it settles
 * with later is discarded (a late rejection too, so it cannot surface as an unhandled one). The hook's
 * context carries a signal that aborts at the deadline, for the calls it makes. It runs in the plugin's
 * scope (containment.ts): a timer of it that throws, or a promise it leaves rejected, fails it too.
 */
async function withDeadline<T>(
  plugin: string,
  ms: number,
  hook: (signal: AbortSignal) => T | Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let stray: (error: unknown) => void = () => undefined;
  const failed = new Promise<never>((_, reject) => {
    stray = (error) => reject(new Error(`a timer or promise it started failed: ${errorText(error)}`));
    timer = setTimeout(() => {
      controller.abort(new HookTimeout(ms));
      reject(new HookTimeout(ms));
    }, ms);
  });
  const running = inPluginScope(plugin, stray, () => Promise.resolve().then(() => hook(controller.signal)));
  running.catch(() => undefined);
  try {
    return await Promise.race([running, failed]);
  } finally {
    clearTimeout(timer);
  }
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

type Hooks = ValidatingPlugin<unknown, unknown> & MutatingPlugin<unknown, unknown>;

interface Bound {
  plugin: string;
  group: Group;
  mode: "validating" | "mutating";
  hooks: Hooks;
}

const errorText = (error: unknown): string =>
  redactString(error instanceof Error ? error.message : String(error));

export class Gatekeeper {
  private readonly options: GatekeeperOptions;
  private readonly rejections = new Map<string, number>();

  constructor(options: GatekeeperOptions) {
    this.options = options;
  }

  private get hookTimeoutMs(): number {
    return this.options.hookTimeoutMs ?? 10_000;
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
    const context = this.context(kind.name, target);
    let current = object;
    for (const bound of this.bound(kind.name, "entry")) {
      if (!bound.hooks.entry) continue;
      const started = this.options.clock.monotonic();
      let result: InvocationResult = "ok";
      try {
        const named = this.named(context, bound);
        const entry = bound.hooks.entry;
        if (bound.mode === "validating") {
          const input = frozenCopy(current);
          await withDeadline(bound.plugin, this.hookTimeoutMs, (signal) =>
            entry({ ...named, signal }, input),
          );
        } else {
          const input = copyOf(current);
          const output = await withDeadline(bound.plugin, this.hookTimeoutMs, (signal) =>
            entry({ ...named, signal }, input),
          );
          // A teardown uses the object as read: a changed deletionPolicy must not delete what was kept.
          // An output equal to its input changes nothing, and the pass keeps the object it had.
          if (!target.teardown && !deepEqual(current, output)) {
            const problem = entryOutputProblem(kind, current, output);
            if (problem) {
              result = "refused";
              throw new Error(`its output is refused: ${problem}`);
            }
            current = output as unknown as KubeObject;
          }
        }
      } catch (error) {
        if (result === "ok") result = "threw";
        const message = `gatekeeper plugin "${bound.plugin}" rejected this ${kind.name}: ${errorText(error)}`;
        if (target.teardown) {
          target.log.warn(
            { plugin: bound.plugin, kind: kind.name, error: errorText(error) },
            "a gatekeeper plugin threw at the entry of a teardown, which cannot be vetoed: going on",
          );
        } else {
          pass.rejection = { plugin: bound.plugin, message, retryAfterMs: this.retryAfter(key) };
          target.log.info({ plugin: bound.plugin, kind: kind.name }, message);
        }
      } finally {
        this.record(bound, kind.name, "entry", result, started, target.log);
      }
      if (pass.rejection) return pass;
    }
    this.rejections.delete(key);
    pass.object = current;
    return pass;
  }

  /** Runs every exit hook in exit order; returns the status to write and the first failure. */
  async exit(
    kind: GatedKind,
    original: KubeObject,
    status: Record<string, unknown>,
    context: ExitContext,
    log: LogSink,
  ): Promise<{ status: Record<string, unknown>; failure: string | undefined }> {
    let current = status;
    let failure: string | undefined;
    // Copied once, and only for a kind some plugin hooks: most passes have none to hand it to.
    let frozenOriginal: KubeObject | undefined;
    for (const bound of this.bound(kind.name, "exit")) {
      if (!bound.hooks.exit) continue;
      const started = this.options.clock.monotonic();
      let result: InvocationResult = "ok";
      try {
        const named = { ...this.named(context, bound), outcome: context.outcome, error: context.error };
        const exit = bound.hooks.exit;
        const object = (frozenOriginal ??= frozenCopy(original));
        if (bound.mode === "validating") {
          const input = frozenCopy(current);
          await withDeadline(bound.plugin, this.hookTimeoutMs, (signal) =>
            exit({ ...named, signal }, object, input),
          );
        } else {
          const input = copyOf(current);
          const output = await withDeadline(bound.plugin, this.hookTimeoutMs, (signal) =>
            exit({ ...named, signal }, object, input),
          );
          // A status equal to the one handed over is the one already checked (or assembled by the pass).
          if (!deepEqual(current, output)) {
            const problem = exitOutputProblem(kind, output);
            if (problem) {
              result = "refused";
              throw new Error(`its status is refused: ${problem}`);
            }
            current = output as unknown as Record<string, unknown>;
          }
        }
      } catch (error) {
        if (result === "ok") result = "threw";
        failure ??= `gatekeeper plugin "${bound.plugin}" failed at the exit of this ${kind.name}: ${errorText(error)}`;
        log.warn(
          { plugin: bound.plugin, kind: kind.name, error: errorText(error) },
          "gatekeeper exit hook failed",
        );
      } finally {
        this.record(bound, kind.name, "exit", result, started, log);
      }
    }
    return { status: current, failure };
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

  private named<C extends PassContext>(context: C, bound: Bound): C {
    return { ...context, log: childOf(context.log, { plugin: bound.plugin }) };
  }

  private bound(kind: GatedKindName, hook: "entry" | "exit"): Bound[] {
    const ordered = hook === "entry" ? entryOrder(this.options.plugins) : exitOrder(this.options.plugins);
    return ordered.flatMap(({ group, plugin }): Bound[] => {
      const validating = plugin.validating?.[kind] as Hooks | undefined;
      const mutating = plugin.mutating?.[kind] as Hooks | undefined;
      if (validating) return [{ plugin: plugin.name, group, mode: "validating", hooks: validating }];
      if (mutating) return [{ plugin: plugin.name, group, mode: "mutating", hooks: mutating }];
      return [];
    });
  }

  private record(
    bound: Bound,
    kind: string,
    hook: "entry" | "exit",
    result: InvocationResult,
    started: number,
    log: LogSink,
  ): void {
    const ms = Math.max(0, this.options.clock.monotonic() - started);
    this.options.metrics?.record({
      plugin: bound.plugin,
      group: bound.group,
      kind,
      hook,
      result,
      seconds: ms / 1000,
    });
    log.debug(
      { plugin: bound.plugin, group: bound.group, mode: bound.mode, kind, hook, result, ms },
      "gatekeeper plugin invoked",
    );
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

/** A pino logger's child, or the sink itself when it has no children (a test's recorder). */
function childOf(log: LogSink, bindings: Record<string, unknown>): LogSink {
  const withChild = log as LogSink & { child?: (b: Record<string, unknown>) => LogSink };
  return typeof withChild.child === "function" ? withChild.child(bindings) : log;
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
