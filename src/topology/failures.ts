// How a failed broker request is reported and retried. Everything is retried, as upstream's
// controller-runtime requeues every error: the broker's verdict on a request (a 4xx other than a
// rejected login, a refused redeclaration among them) with a backoff that doubles per refusal in a
// row, since a fixed broker (the conflicting object removed, say) must heal the resource; a missing
// dependency (404, or a vhost the login may not enter yet), a rejected login and an unreachable broker
// after their fixed intervals.
import {
  ManagementApiError,
  ManagementNotFoundError,
  ManagementResponseError,
  ManagementTransientError,
  QueueInUseError,
  isInequivalentRedeclare,
} from "./broker/index.ts";
import { redactString, scrub } from "../runtime/base/redact.ts";
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
  if (error instanceof ManagementNotFoundError || vhostAccessRefused(error)) {
    // Usually the vhost, queue or exchange it lives in is not declared yet, or not finished.
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

/**
 * A 401 "Access refused." is not a rejected login ("Login failed") but a vhost the login may not enter.
 * RabbitMQ grants the user that creates a vhost its permissions only once the vhost runs, so a
 * declaration in a vhost declared a moment ago (a vhost repaired after a deletion, its queue beside it)
 * is answered so for a few milliseconds: the vhost is not ready yet, like a 404's.
 */
function vhostAccessRefused(error: unknown): error is ManagementApiError {
  return (
    error instanceof ManagementApiError && error.status === 401 && /^Access refused\b/.test(error.reason)
  );
}
