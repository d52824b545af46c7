// An endpoint that lost what it held (a broker restarted empty: a lost volume, a reset, a cluster made
// again under the same login). A pass finds it when its object is missing although the memo vouched for
// it, a backend's own check of the endpoint when it finds it started afresh. Every object applied to it
// is then looked at at once, instead of each at its own verification, up to a period later.
import type { ExternalDeps } from "./deps.ts";

/** No entry of `endpoint` confirmed before `now` vouches any more; the objects applied to it pass now. */
export function endpointLost(
  deps: Pick<ExternalDeps, "state" | "logger" | "wake">,
  endpoint: string,
  now: number,
  why: string,
  except?: string,
): void {
  const keys = deps.state.applied.lost(endpoint, now).filter((key) => key !== except);
  deps.logger.warn(
    { endpoint, objects: keys.length, why },
    "the endpoint lost what it held: looking at each of its objects now",
  );
  deps.wake?.(keys);
}
