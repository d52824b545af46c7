// One request to an API server, sent again while the answer asks for that, as client-go does.
import { setTimeout as delay } from "node:timers/promises";
import type { Dispatcher } from "undici";

/** client-go's bound on the answers that ask to be retried, and ours on each wait they ask for. */
const maxRetries = 10;
const maxRetryWaitMs = 10_000;

/**
 * Sends a request, and sends it again while the answer asks for that, as client-go does: a
 * `429 Too Many Requests` (API Priority and Fairness, the max-in-flight limit) or a 5xx, with
 * `Retry-After` in whole seconds. Each wait is the seconds asked for, at most 10 s, at most 10 times;
 * the request's signal ends a wait too. `retried` is told of each answer that was retried.
 */
export async function exchange(
  dispatcher: Dispatcher,
  url: URL,
  options: Parameters<typeof send>[2],
  retried?: (code: number) => void,
): Promise<Dispatcher.ResponseData> {
  for (let attempt = 0; ; attempt++) {
    const response = await send(dispatcher, url, options);
    const waitMs = retryAfterMs(response);
    if (waitMs === undefined || attempt >= maxRetries) return response;
    retried?.(response.statusCode);
    await response.body.dump();
    try {
      await delay(waitMs, undefined, { signal: options.signal });
    } catch {
      options.signal.throwIfAborted();
    }
  }
}

function send(
  dispatcher: Dispatcher,
  url: URL,
  options: {
    method: string;
    headers: Record<string, string>;
    body?: string | undefined;
    signal: AbortSignal;
  },
): Promise<Dispatcher.ResponseData> {
  return dispatcher.request({
    origin: url.origin,
    path: url.pathname + url.search,
    method: options.method as Dispatcher.HttpMethod,
    headers: options.headers,
    body: options.body ?? null,
    signal: options.signal,
  });
}

/** How long an answer asks to wait before the request is sent again (client-go's checkWait), if it does. */
function retryAfterMs(response: Dispatcher.ResponseData): number | undefined {
  const code = response.statusCode;
  if (code !== 429 && code < 500) return undefined;
  const header = response.headers["retry-after"];
  const seconds = typeof header === "string" && /^\d+$/.test(header.trim()) ? Number(header) : undefined;
  return seconds === undefined ? undefined : Math.min(seconds * 1000, maxRetryWaitMs);
}
