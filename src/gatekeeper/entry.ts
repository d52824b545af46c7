// The entry hooks of one pass, in entry order, on the object as read. A validating hook approves by
// returning; a mutating one hands the next hook, and the pass, the object it returns once the kind's
// schema accepts it. The first hook that throws rejects the pass, except on a teardown, which cannot be
// vetoed: there a throw is logged and a mutating output ignored.
import type { KubeObject } from "../runtime/port/kube-rest.ts";
import { deepEqual } from "../runtime/base/conditions.ts";
import type { PassContext } from "./api.ts";
import { errorText } from "./containment.ts";
import { copyOf, frozenCopy } from "./copies.ts";
import { boundHooks, callHook, forPlugin, record, type HookRunner } from "./invocation.ts";
import type { GatedKind } from "./kinds.ts";
import type { InvocationResult } from "./metrics.ts";
import { entryOutputProblem } from "./schema-check.ts";

/** The object the pass reconciles, or the plugin that rejected it with its message. */
export type Entered = { object: KubeObject } | { rejected: { plugin: string; message: string } };

export async function runEntryHooks(
  runner: HookRunner,
  kind: GatedKind,
  object: KubeObject,
  context: PassContext,
): Promise<Entered> {
  const log = context.log;
  let current = object;
  for (const bound of boundHooks(runner, kind.name, "entry")) {
    if (!bound.hooks.entry) continue;
    const started = runner.clock.monotonic();
    let result: InvocationResult = "ok";
    let rejected: { plugin: string; message: string } | undefined;
    try {
      const named = forPlugin(context, bound);
      const entry = bound.hooks.entry;
      if (bound.mode === "validating") {
        const input = frozenCopy(current);
        await callHook(runner, bound, (signal) => entry({ ...named, signal }, input));
      } else {
        const input = copyOf(current);
        const output = await callHook(runner, bound, (signal) => entry({ ...named, signal }, input));
        // A teardown uses the object as read: a changed deletionPolicy must not delete what was kept.
        // An output equal to its input changes nothing, and the pass keeps the object it had.
        if (!context.teardown && !deepEqual(current, output)) {
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
      if (context.teardown) {
        log.warn(
          { plugin: bound.plugin, kind: kind.name, error: errorText(error) },
          "a gatekeeper plugin threw at the entry of a teardown, which cannot be vetoed: going on",
        );
      } else {
        rejected = { plugin: bound.plugin, message };
        log.info({ plugin: bound.plugin, kind: kind.name }, message);
      }
    } finally {
      record(runner, bound, kind.name, "entry", result, started, log);
    }
    if (rejected) return { rejected };
  }
  return { object: current };
}
