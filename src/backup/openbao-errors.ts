// How an OpenBao call's failure, or an answer of the wrong shape, becomes a BackupError: built from the
// status, the network error's code and OpenBao's own messages, scrubbed of the secrets it could echo.
import type { z } from "zod";
import { scrub } from "../runtime/base/redact.ts";
import { OpenBaoRefusal, OpenBaoUnanswered } from "./openbao-http.ts";
import { BackupError, type BackupErrorKind } from "./store.ts";

const networkCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "ETIMEDOUT",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
]);

/** `err` of `what` at OpenBao at `address`, with `secrets` scrubbed from OpenBao's messages. */
export function translate(
  err: unknown,
  what: string,
  address: string,
  secrets: Iterable<string | undefined>,
): BackupError {
  if (err instanceof BackupError) return err;
  if (!(err instanceof OpenBaoRefusal)) {
    const code = err instanceof OpenBaoUnanswered ? err.code : undefined;
    if (code && networkCodes.has(code)) {
      return new BackupError("unreachable", `OpenBao at ${address} is unreachable (${code}) during ${what}`);
    }
    return new BackupError("failed", `${what} at OpenBao ${address} failed before a response`);
  }
  const status = err.status;
  const detail = scrub(err.errors.join("; ") || "no detail", secrets)
    .replace(/\s+/g, " ")
    .trim();
  let kind: BackupErrorKind = "failed";
  if (status === 401 || status === 403) kind = "auth-refused";
  else if (status === 503 && /sealed/i.test(detail)) kind = "sealed";
  return new BackupError(kind, `OpenBao refused ${what} with status ${status}: ${detail}`, status);
}

export function parse<T>(schema: z.ZodType<T>, body: unknown, what: string): T {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  // Paths and codes only: zod's messages are safe today, but the values are credentials.
  const where = result.error.issues.map((i) => `${i.path.join(".") || "(root)"} ${i.code}`).join(", ");
  throw new BackupError("invalid-response", `OpenBao answered ${what} with an unexpected body: ${where}`);
}
