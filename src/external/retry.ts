// When a pass looks again. The endpoint's verdict on a request is retried, since a fixed endpoint (the
// conflicting object removed, say) must heal the resource, but with a backoff that doubles per refusal
// in a row, so a standing refusal costs few requests; anything else waits its interval. An object may
// name its own interval (a SQL object's spec.retryInterval), which replaces every one of them.
import type { ExternalDeps, ExternalSettings } from "./deps.ts";
import type { ExternalObject, Failure } from "./kind.ts";
import type { Pass } from "./pass.ts";

/** The wait after the `count`th refusal in a row: waitingRetryMs, doubled each time, at most the verification period. */
export function refusalBackoffMs(
  settings: Pick<ExternalSettings, "waitingRetryMs" | "verificationPeriodMs">,
  count: number,
): number {
  const doubled = settings.waitingRetryMs * 2 ** Math.max(0, count - 1);
  return Math.min(doubled, Math.max(settings.verificationPeriodMs, settings.waitingRetryMs));
}

/** The object's own interval, where it names one, else `ms`. */
export function wait<D extends ExternalDeps, O extends ExternalObject, S, C>(
  { kind, object }: Pass<D, O, S, C>,
  ms: number,
): number {
  return kind.retryInterval?.(object) ?? ms;
}

/** When to try again after `failure`: a refusal is counted and backs off; anything else forgets the memo. */
export function retryAfter<D extends ExternalDeps, O extends ExternalObject, S, C>(
  pass: Pass<D, O, S, C>,
  failure: Failure,
): number {
  const { deps, key } = pass;
  if (failure.verdict === "refused") {
    return wait(pass, refusalBackoffMs(deps.settings, deps.state.applied.refused(key)));
  }
  deps.state.applied.forget(key);
  return wait(pass, failure.retryAfterMs);
}
