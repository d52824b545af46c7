// One hook's invocation: which plugins hook a kind and how (validating or mutating), in the order of
// order.ts; the context a hook gets (its logger naming the plugin); the call within its deadline; and
// its record, a metric and a debug line.
import type { Clock } from "../runtime/base/clock.ts";
import type { LogSink } from "../runtime/base/logging.ts";
import type {
  GatedKindName,
  GatekeeperPlugin,
  MutatingPlugin,
  PassContext,
  ValidatingPlugin,
} from "./api.ts";
import { withDeadline } from "./deadline.ts";
import type { GatekeeperMetrics, InvocationResult } from "./metrics.ts";
import { entryOrder, exitOrder, type Group, type Grouped } from "./order.ts";

/** What invoking hooks needs of the gatekeeper's options. */
export interface HookRunner {
  plugins: Grouped<GatekeeperPlugin>;
  clock: Pick<Clock, "monotonic">;
  metrics?: GatekeeperMetrics | undefined;
  /** How long one hook may take (--gatekeeper-hook-timeout); default 10 s. */
  hookTimeoutMs?: number;
}

type Hooks = ValidatingPlugin<unknown, unknown> & MutatingPlugin<unknown, unknown>;

/** A plugin's hooks for one kind. */
export interface Bound {
  plugin: string;
  group: Group;
  mode: "validating" | "mutating";
  hooks: Hooks;
}

/** The plugins that hook `kind`, in the order `hook` runs them. */
export function boundHooks(runner: HookRunner, kind: GatedKindName, hook: "entry" | "exit"): Bound[] {
  const ordered = hook === "entry" ? entryOrder(runner.plugins) : exitOrder(runner.plugins);
  return ordered.flatMap(({ group, plugin }): Bound[] => {
    const validating = plugin.validating?.[kind] as Hooks | undefined;
    const mutating = plugin.mutating?.[kind] as Hooks | undefined;
    if (validating) return [{ plugin: plugin.name, group, mode: "validating", hooks: validating }];
    if (mutating) return [{ plugin: plugin.name, group, mode: "mutating", hooks: mutating }];
    return [];
  });
}

/** `context` with a logger that names the plugin. */
export function forPlugin<C extends PassContext>(context: C, bound: Bound): C {
  return { ...context, log: childOf(context.log, { plugin: bound.plugin }) };
}

/** A pino logger's child, or the sink itself when it has no children (a test's recorder). */
function childOf(log: LogSink, bindings: Record<string, unknown>): LogSink {
  const withChild = log as LogSink & { child?: (b: Record<string, unknown>) => LogSink };
  return typeof withChild.child === "function" ? withChild.child(bindings) : log;
}

/** Calls a hook of `bound` within the runner's deadline. */
export function callHook<T>(
  runner: HookRunner,
  bound: Bound,
  hook: (signal: AbortSignal) => T | Promise<T>,
): Promise<T> {
  return withDeadline(bound.plugin, runner.hookTimeoutMs ?? 10_000, hook);
}

export function record(
  runner: HookRunner,
  bound: Bound,
  kind: string,
  hook: "entry" | "exit",
  result: InvocationResult,
  started: number,
  log: LogSink,
): void {
  const ms = Math.max(0, runner.clock.monotonic() - started);
  runner.metrics?.record({
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
