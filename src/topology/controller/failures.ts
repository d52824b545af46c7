// How a failed broker request is reported and retried: a refused redeclaration or another verdict
// on the request is terminal until the object changes; a missing dependency (404), a rejected login
// and an unreachable broker are retried.
import {
  ManagementApiError,
  ManagementNotFoundError,
  ManagementResponseError,
  ManagementTransientError,
  isInequivalentRedeclare,
} from "../broker/index.ts";
import { redactString, scrub } from "../../runtime/redact.ts";
import type { ControllerSettings } from "./deps.ts";

export interface BrokerFailure {
  /** For the Ready condition and the log: the broker's reason, with every known secret removed. */
  message: string;
  /** The broker's verdict on this desired state: not retried until the object changes. */
  terminal: boolean;
  retryAfterMs?: number;
}

/** undefined when `error` is not a broker failure (a bug, or the Kubernetes API). */
export function brokerFailure(
  error: unknown,
  settings: ControllerSettings,
  secrets: readonly string[],
): BrokerFailure | undefined {
  const clean = (text: string) => redactString(scrub(text, secrets));
  if (isInequivalentRedeclare(error)) {
    return { message: clean(error.reason), terminal: true };
  }
  if (error instanceof ManagementNotFoundError) {
    // Usually the vhost, queue or exchange it lives in is not declared yet.
    return { message: clean(error.message), terminal: false, retryAfterMs: settings.waitingRetryMs };
  }
  if (error instanceof ManagementApiError) {
    const login = error.status === 401 || error.status === 403;
    return login
      ? { message: clean(error.message), terminal: false, retryAfterMs: settings.transientRetryMs }
      : { message: clean(error.message), terminal: true };
  }
  if (error instanceof ManagementTransientError || error instanceof ManagementResponseError) {
    return { message: clean(error.message), terminal: false, retryAfterMs: settings.transientRetryMs };
  }
  return undefined;
}
