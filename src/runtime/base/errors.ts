// The error classes a reconcile can throw, and how the controller loop treats each (after seed 004):
//   terminal     - retrying cannot help; retried when the object changes, and after a long backstop.
//   transient    - expected to clear on its own (a backend down, a timeout); counted as a reconcile
//                  error, retried after a fixed interval, logged as a warning with that interval.
//   notFound     - something the reconcile needed is gone; retried with backoff, no error log.
//   unclassified - anything else; rate-limited retry and an error log.

export class TerminalError extends Error {
  override name = "TerminalError";
  /** A stable, machine-readable reason for conditions and events. */
  readonly reason: string;
  constructor(message: string, reason = "TerminalError", options?: ErrorOptions) {
    super(message, options);
    this.reason = reason;
  }
}

export class TransientError extends Error {
  override name = "TransientError";
  /** Overrides the configured transient retry interval when set. */
  readonly retryAfterMs: number | undefined;
  constructor(message: string, options?: ErrorOptions & { retryAfterMs?: number }) {
    super(message, options);
    this.retryAfterMs = options?.retryAfterMs;
  }
}

export class NotFoundError extends Error {
  override name = "NotFoundError";
}

export type ErrorClass = "terminal" | "transient" | "notFound" | "unclassified";

/** Classifies by class, also when the classified error is wrapped as the `cause` of another. */
export function classifyError(error: unknown): ErrorClass {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 10; e = e.cause, depth++) {
    if (e instanceof TerminalError) return "terminal";
    if (e instanceof TransientError) return "transient";
    if (e instanceof NotFoundError) return "notFound";
  }
  return "unclassified";
}

/** The first error of the given class in the cause chain. */
export function findError<T extends Error>(error: unknown, type: new (...args: never[]) => T): T | undefined {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 10; e = e.cause, depth++) {
    if (e instanceof type) return e;
  }
  return undefined;
}

/** Programming errors: counted as panics, the closest thing Node has. */
export function isPanic(error: unknown): boolean {
  return (
    !(error instanceof Error) ||
    error instanceof TypeError ||
    error instanceof ReferenceError ||
    error instanceof RangeError ||
    error instanceof SyntaxError
  );
}

export class ReconcileTimeoutError extends Error {
  override name = "ReconcileTimeoutError";
}
