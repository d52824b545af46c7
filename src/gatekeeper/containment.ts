// A plugin's stray failures stay the plugin's. A hook (or configure) runs in an async scope that names
// its plugin; every timer, callback and promise it starts inherits that scope. A throw from such a
// timer, or a promise it left rejected, reaches the process's handlers with the scope still set: it is
// logged naming the plugin and fails the plugin's hook if that is still running, instead of taking the
// process down. A stray failure outside every plugin's scope is the operator's own bug: logged, and the
// process exits 1, as Node would have ended it.
import { AsyncLocalStorage } from "node:async_hooks";
import type { Logger } from "pino";
import { redactString } from "../runtime/base/redact.ts";

interface PluginScope {
  plugin: string;
  /** Fails the hook that runs in this scope; a no-op once it has settled. */
  fail(error: unknown): void;
}

const scopes = new AsyncLocalStorage<PluginScope>();

/** Runs `fn` in `plugin`'s scope; `fail` receives a stray failure of what `fn` started. */
export function inPluginScope<T>(plugin: string, fail: (error: unknown) => void, fn: () => T): T {
  return scopes.run({ plugin, fail }, fn);
}

/** What a plugin's failure says, redacted: the text its hook's rejection, logs and messages carry. */
export const errorText = (error: unknown): string =>
  redactString(error instanceof Error ? error.message : String(error));

/**
 * Installs the process's handlers for uncaught exceptions and unhandled rejections; returns their
 * removal. `exit` ends the process on a failure outside every plugin (injected by tests).
 */
export function containPluginFailures(
  log: Pick<Logger, "error" | "fatal">,
  exit: (code: number) => void = (code) => process.exit(code),
): () => void {
  const handle = (what: string) => (error: unknown) => {
    const scope = scopes.getStore();
    if (!scope) {
      log.fatal({ err: error }, `${what} outside every gatekeeper plugin: the process stops`);
      exit(1);
      return;
    }
    log.error(
      { plugin: scope.plugin, error: errorText(error) },
      `gatekeeper plugin "${scope.plugin}": ${what}; its hook fails, the process goes on`,
    );
    scope.fail(error);
  };
  const uncaught = handle("an exception nothing caught");
  const unhandled = handle("a promise rejected with no handler");
  process.on("uncaughtException", uncaught);
  process.on("unhandledRejection", unhandled);
  return () => {
    process.off("uncaughtException", uncaught);
    process.off("unhandledRejection", unhandled);
  };
}
