import { randomUUID } from "node:crypto";
import { pino, type DestinationStream, type Logger } from "pino";
import { redact } from "./redact.ts";

export type { Logger } from "pino";

/**
 * The part of a logger the reconcilers call (an object first, then the message). A pino Logger
 * satisfies it; the orders and topology code depend on this, not on pino.
 */
export interface LogSink {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const logLevels = ["trace", "debug", "info", "warn", "error", "fatal"] as const;
export type LogLevel = (typeof logLevels)[number];

/**
 * A pino JSON logger that redacts every argument of every call (objects, errors, messages and
 * child bindings), so a secret passed by mistake never reaches the output.
 */
export function createLogger(options: { level: LogLevel; destination?: DestinationStream }): Logger {
  return redactingChildren(
    pino(
      {
        level: options.level,
        base: undefined,
        timestamp: pino.stdTimeFunctions.isoTime,
        formatters: {
          level: (label) => ({ level: label }),
          bindings: (bindings) => redact(bindings) as Record<string, unknown>,
        },
        serializers: { err: (e: unknown) => redact(e) },
        hooks: {
          logMethod(args, method) {
            const clean = args.map((a) => (a instanceof Error ? { err: redact(a) } : redact(a)));
            method.apply(this, clean as Parameters<typeof method>);
          },
        },
      },
      options.destination,
    ),
  );
}

// pino writes child bindings as given; redact them on the way in, for children of children too.
function redactingChildren(logger: Logger): Logger {
  const child = logger.child.bind(logger);
  logger.child = ((bindings: pino.Bindings, options?: pino.ChildLoggerOptions) =>
    redactingChildren(
      child(redact(bindings) as pino.Bindings, options) as Logger,
    )) as unknown as Logger["child"];
  return logger;
}

export interface ReconcileLogContext {
  controller: string;
  cluster: string;
  namespace: string;
  name: string;
}

/** The child logger for one reconcile, with a fresh reconcile id. */
export function reconcileLogger(log: Logger, context: ReconcileLogContext): Logger {
  return log.child({ ...context, reconcileID: randomUUID() });
}
