// The exit hooks of one pass, in exit order, on the original object and the status about to be
// written. A mutating hook hands the next one the status it returns once the kind's schema accepts it.
// A hook that throws does not stop the others: the first failure is returned with the status to write.
import type { KubeObject } from "../runtime/port/kube-rest.ts";
import type { LogSink } from "../runtime/base/logging.ts";
import { deepEqual } from "../runtime/base/conditions.ts";
import type { ExitContext } from "./api.ts";
import { errorText } from "./containment.ts";
import { copyOf, frozenCopy } from "./copies.ts";
import { boundHooks, callHook, forPlugin, record, type HookRunner } from "./invocation.ts";
import type { GatedKind } from "./kinds.ts";
import type { InvocationResult } from "./metrics.ts";
import { exitOutputProblem } from "./schema-check.ts";

export async function runExitHooks(
  runner: HookRunner,
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
  for (const bound of boundHooks(runner, kind.name, "exit")) {
    if (!bound.hooks.exit) continue;
    const started = runner.clock.monotonic();
    let result: InvocationResult = "ok";
    try {
      const named = { ...forPlugin(context, bound), outcome: context.outcome, error: context.error };
      const exit = bound.hooks.exit;
      const object = (frozenOriginal ??= frozenCopy(original));
      if (bound.mode === "validating") {
        const input = frozenCopy(current);
        await callHook(runner, bound, (signal) => exit({ ...named, signal }, object, input));
      } else {
        const input = copyOf(current);
        const output = await callHook(runner, bound, (signal) => exit({ ...named, signal }, object, input));
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
      record(runner, bound, kind.name, "exit", result, started, log);
    }
  }
  return { status: current, failure };
}
