// A hook's deadline (--gatekeeper-hook-timeout): past it the hook has failed, whatever it does later.
import { errorText, inPluginScope } from "./containment.ts";

/** A hook that did not settle within its deadline. */
class HookTimeout extends Error {
  constructor(ms: number) {
    super(`it did not answer within ${ms / 1000} s`);
  }
}

/**
 * Runs a hook of `plugin` with a deadline: past it the hook counts as failed and whatever it settles
 * with later is discarded (a late rejection too, so it cannot surface as an unhandled one). The hook's
 * context carries a signal that aborts at the deadline, for the calls it makes. It runs in the plugin's
 * scope (containment.ts): a timer of it that throws, or a promise it leaves rejected, fails it too.
 */
export async function withDeadline<T>(
  plugin: string,
  ms: number,
  hook: (signal: AbortSignal) => T | Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let stray: (error: unknown) => void = () => undefined;
  const failed = new Promise<never>((_, reject) => {
    stray = (error) => reject(new Error(`a timer or promise it started failed: ${errorText(error)}`));
    timer = setTimeout(() => {
      controller.abort(new HookTimeout(ms));
      reject(new HookTimeout(ms));
    }, ms);
  });
  const running = inPluginScope(plugin, stray, () => Promise.resolve().then(() => hook(controller.signal)));
  running.catch(() => undefined);
  try {
    return await Promise.race([running, failed]);
  } finally {
    clearTimeout(timer);
  }
}
