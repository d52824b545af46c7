// How long a refused object waits: the endpoint's verdict on a request is retried, since a fixed
// endpoint (the conflicting object removed, say) must heal the resource, but with a backoff that
// doubles per refusal in a row, so a standing refusal costs few requests.
import type { ExternalSettings } from "./deps.ts";

/** The wait after the `count`th refusal in a row: waitingRetryMs, doubled each time, at most the verification period. */
export function refusalBackoffMs(
  settings: Pick<ExternalSettings, "waitingRetryMs" | "verificationPeriodMs">,
  count: number,
): number {
  const doubled = settings.waitingRetryMs * 2 ** Math.max(0, count - 1);
  return Math.min(doubled, Math.max(settings.verificationPeriodMs, settings.waitingRetryMs));
}
