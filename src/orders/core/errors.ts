// Error texts safe for conditions and logs: built from the status code and the API server's Status
// message only, never from the request or a value it carried, and scrubbed of the secrets the caller
// names; and the failure of a child that the resource condition reports as it is.
import { scrub } from "../../runtime/base/redact.ts";
import { KubeApiError } from "../../runtime/port/kube-rest.ts";

export function apiErrorText(error: unknown, secrets: Iterable<string | undefined> = []): string {
  const cause =
    error instanceof Error && !(error instanceof KubeApiError) && error.cause instanceof KubeApiError
      ? error.cause
      : error;
  if (cause instanceof KubeApiError) {
    const detail = cause.detail;
    return scrub(detail ? `HTTP ${cause.code}: ${detail}` : `HTTP ${cause.code}`, secrets);
  }
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === "string") return `request failed (${code})`;
  return scrub(error instanceof Error ? error.message : String(error), secrets);
}

/** A child-level failure that the resource condition reports with the kind's error reason. */
export class ChildError extends Error {
  override name = "ChildError";
}
