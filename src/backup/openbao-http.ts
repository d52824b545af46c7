// OpenBao's HTTP API, one JSON call at a time, over a keep-alive connection pool of undici. Nothing here
// keeps what it sent: a failure carries the status and OpenBao's own `errors` strings, or the network
// error's code, never the request (its X-Vault-Token header, a written password).
import { Agent } from "undici";

/** A call that got an answer outside 2xx. */
export class OpenBaoRefusal extends Error {
  override name = "OpenBaoRefusal";
  readonly status: number;
  /** OpenBao's `errors` strings, unscrubbed: the caller scrubs them before they go anywhere. */
  readonly errors: string[];
  constructor(status: number, errors: string[]) {
    super(`status ${status}`);
    this.status = status;
    this.errors = errors;
  }
}

/** A call that got no answer: the network error's code (ECONNREFUSED, a timeout), nothing else. */
export class OpenBaoUnanswered extends Error {
  override name = "OpenBaoUnanswered";
  readonly code: string | undefined;
  constructor(code: string | undefined) {
    super(code ? `no answer (${code})` : "no answer");
    this.code = code;
  }
}

export interface OpenBaoCall {
  method: "GET" | "POST" | "DELETE";
  /** Below /v1/, e.g. `kv-v2/data/a/b`. */
  path: string;
  token?: string | undefined;
  body?: unknown;
  /** Statuses whose body is the answer, as sys/health's 429, 472, 473, 501 and 503 are. */
  answers?: readonly number[];
}

export interface OpenBaoHttp {
  call(request: OpenBaoCall): Promise<unknown>;
}

export function openBaoHttp(address: string, timeoutMs: number): OpenBaoHttp {
  const url = new URL(address);
  const origin = url.origin;
  const prefix = url.pathname.replace(/\/+$/, "");
  const agent = new Agent({ headersTimeout: timeoutMs, bodyTimeout: timeoutMs, connectTimeout: timeoutMs });
  return {
    async call({ method, path, token, body, answers = [] }) {
      const headers: Record<string, string> = { accept: "application/json" };
      if (token) headers["x-vault-token"] = token;
      if (body !== undefined) headers["content-type"] = "application/json";
      let response;
      try {
        response = await agent.request({
          origin,
          path: `${prefix}/v1/${path}`,
          method,
          headers,
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (error) {
        throw new OpenBaoUnanswered(codeOf(error));
      }
      let text: string;
      try {
        text = await response.body.text();
      } catch (error) {
        throw new OpenBaoUnanswered(codeOf(error));
      }
      const parsed = text ? parseJson(text) : undefined;
      const status = response.statusCode;
      if ((status >= 200 && status < 300) || answers.includes(status)) return parsed;
      const errors = (parsed as { errors?: unknown } | undefined)?.errors;
      throw new OpenBaoRefusal(
        status,
        Array.isArray(errors) ? errors.filter((e): e is string => typeof e === "string") : [],
      );
    },
  };
}

/** A body that is not JSON is no answer OpenBao gives; its text is not kept (it could echo the request). */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return { errors: ["the answer is not JSON"] };
  }
}

function codeOf(error: unknown): string | undefined {
  if (error instanceof DOMException && error.name === "TimeoutError") return "ETIMEDOUT";
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === "string") return code;
  const cause = (error as { cause?: { code?: unknown } } | undefined)?.cause?.code;
  return typeof cause === "string" ? cause : undefined;
}
