// How a failed broker request is reported and retried. Everything is retried, as upstream's
// controller-runtime requeues every error: the broker's verdict on a request (a 4xx other than a
// rejected login, a refused redeclaration among them) with a backoff that doubles per refusal in a
// row, since a fixed broker (the conflicting object removed, say) must heal the resource; a missing
// dependency (404), a rejected login and an unreachable broker after their fixed intervals.
import {
  ManagementApiError,
  ManagementNotFoundError,
  ManagementResponseError,
  ManagementTransientError,
  QueueInUseError,
  isInequivalentRedeclare,
} from "../broker/index.ts";
import { redactString, scrub } from "../../runtime/base/redact.ts";
import type { ControllerSettings } from "./deps.ts";
import { ExplainedRefusal } from "./refusals.ts";

/** The message is for the Ready condition and the log: the broker's reason, every known secret removed. */
export type BrokerFailure =
  { message: string; refusal: true } | { message: string; refusal: false; retryAfterMs: number };

/** undefined when `error` is not a broker failure (a bug, or the Kubernetes API). */
export function brokerFailure(
  error: unknown,
  settings: ControllerSettings,
  secrets: readonly string[],
): BrokerFailure | undefined {
  const clean = (text: string) => redactString(scrub(text, secrets));
  if (error instanceof ExplainedRefusal) return { message: clean(error.message), refusal: true };
  if (isInequivalentRedeclare(error)) return { message: clean(error.reason), refusal: true };
  // Kept on purpose until it is empty or unused: as a refusal, checked again with a backoff.
  if (error instanceof QueueInUseError) return { message: clean(error.message), refusal: true };
  if (error instanceof ManagementNotFoundError) {
    // Usually the vhost, queue or exchange it lives in is not declared yet.
    return { message: clean(error.message), refusal: false, retryAfterMs: settings.waitingRetryMs };
  }
  if (error instanceof ManagementApiError) {
    if (error.status === 401 || error.status === 403) {
      return { message: clean(error.message), refusal: false, retryAfterMs: settings.transientRetryMs };
    }
    return { message: clean(error.message), refusal: true };
  }
  if (error instanceof ManagementTransientError || error instanceof ManagementResponseError) {
    return { message: clean(error.message), refusal: false, retryAfterMs: settings.transientRetryMs };
  }
  return undefined;
}
