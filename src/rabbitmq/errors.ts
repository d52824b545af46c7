// Typed failures of the RabbitMQ management API. A controller branches on the class: a 4xx is the
// broker's verdict on the request (retrying the same request will not help), a 404 is "not there",
// and a transient failure (connection, timeout, 5xx) is worth retrying with backoff.

/** A 4xx answer, carrying the broker's `reason`. */
export class ManagementApiError extends Error {
  override name = "ManagementApiError";
  readonly status: number;
  readonly reason: string;
  readonly method: string;
  readonly path: string;

  constructor(method: string, path: string, status: number, reason: string) {
    super(`${method} ${path}: ${status} ${reason}`);
    this.status = status;
    this.reason = reason;
    this.method = method;
    this.path = path;
  }
}

/** A 404: the object (or one it is addressed through, such as its vhost) does not exist. */
export class ManagementNotFoundError extends ManagementApiError {
  override name = "ManagementNotFoundError";
}

export type TransientCause = "connection" | "timeout" | "server";

/** The broker could not be reached, did not answer in time, or answered 5xx. */
export class ManagementTransientError extends Error {
  override name = "ManagementTransientError";
  readonly kind: TransientCause;
  readonly status: number | undefined;
  readonly method: string;
  readonly path: string;

  constructor(method: string, path: string, cause: TransientCause, detail: string, status?: number) {
    super(`${method} ${path}: ${describe(cause)}: ${detail}`);
    this.kind = cause;
    this.status = status;
    this.method = method;
    this.path = path;
  }
}

/** A 2xx answer whose body is not what the management API documents. */
export class ManagementResponseError extends Error {
  override name = "ManagementResponseError";
}

function describe(cause: TransientCause): string {
  if (cause === "connection") return "broker unreachable";
  if (cause === "timeout") return "no answer in time";
  return "broker error";
}

/** The error for a non-2xx answer; `body` is the response text, the broker's `{error, reason}`. */
export function errorForStatus(
  method: string,
  path: string,
  status: number,
  body: string,
): ManagementApiError | ManagementTransientError {
  const reason = brokerReason(body) ?? `HTTP ${status}`;
  if (status >= 500)
    return new ManagementTransientError(method, path, "server", `${status} ${reason}`, status);
  if (status === 404) return new ManagementNotFoundError(method, path, status, reason);
  return new ManagementApiError(method, path, status, reason);
}

function brokerReason(body: string): string | undefined {
  if (!body) return undefined;
  try {
    const parsed: unknown = JSON.parse(body);
    if (parsed && typeof parsed === "object") {
      const { reason, error } = parsed as { reason?: unknown; error?: unknown };
      const value = reason ?? error;
      if (typeof value === "string") return unescapeHtml(value);
      if (value !== undefined) return JSON.stringify(value);
    }
  } catch {
    // not JSON: fall through to the raw text, shortened
  }
  return body.length > 300 ? `${body.slice(0, 300)}…` : body;
}

/**
 * RabbitMQ up to 4.2 escapes `<`, `>` and `&` in an error's reason for its web UI
 * (rabbit_mgmt_util's escape_html_tags): `[{&lt;&lt;"ha-mode"&gt;&gt;,…}] are not recognised policy
 * settings`. 4.3 sends the text as it is. A condition is plain text, so both read the same.
 */
function unescapeHtml(text: string): string {
  return text.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}

/** The error for a request that failed below HTTP: the connection, TLS, or the request timeout. */
export function errorForFailure(
  method: string,
  path: string,
  failure: unknown,
  timedOut: boolean,
  scrub: (text: string) => string = (t) => t,
): ManagementTransientError {
  const code = (failure as { code?: unknown } | null)?.code;
  const message = scrub(failure instanceof Error ? failure.message : String(failure));
  if (timedOut || code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT") {
    return new ManagementTransientError(method, path, "timeout", message);
  }
  const detail = typeof code === "string" && !message.includes(code) ? `${code} ${message}` : message;
  return new ManagementTransientError(method, path, "connection", detail);
}

/**
 * Whether the broker refused a redeclaration because the object exists with other properties
 * (`inequivalent arg 'durable' for queue …`). Brokers answer 400 `bad_request`; newer ones may
 * prefix the reason with `406 PRECONDITION_FAILED`. The broker's message is `err.reason`.
 */
export function isInequivalentRedeclare(err: unknown): err is ManagementApiError {
  return (
    err instanceof ManagementApiError &&
    err.status >= 400 &&
    err.status < 500 &&
    /\binequivalent\b/i.test(err.reason)
  );
}

/** For `.catch()`: undefined on a 404 (the object went away meanwhile), anything else rethrown. */
export function absentOnNotFound(err: unknown): undefined {
  if (err instanceof ManagementNotFoundError) return undefined;
  throw err;
}

/** A queue kept by deleteIfEmpty / deleteIfUnused because it holds messages or has consumers. */
export class QueueInUseError extends Error {
  override name = "QueueInUseError";
}
