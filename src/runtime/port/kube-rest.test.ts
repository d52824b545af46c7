import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testKubeconfig } from "../../../harness/fakes/kubeconfig.ts";
import { KubeApiError, KubeRest, type KubeObject } from "./kube-rest.ts";

// The watch's framing and endings against a plain HTTP server that answers as the API server does;
// test/runtime/informer.itest.ts watches a real one.

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
let handler: Handler = (_req, res) => res.end();
let server: Server;
let rest: KubeRest;

beforeAll(async () => {
  server = createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  rest = new KubeRest({
    ...testKubeconfig(`http://127.0.0.1:${port}`),
    user: { name: "u", token: "t0ken" },
  });
});

afterAll(async () => {
  await rest.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

interface Outcome {
  events: [string, KubeObject][];
  error: unknown;
  doneCalls: number;
}

/** Starts a watch and resolves when `done` has run (and a moment after, to see it run only once). */
async function watched(
  query: Record<string, string | number | boolean | undefined> = {},
  inactivityMs = 5000,
  afterStart?: (controller: AbortController) => void,
): Promise<Outcome> {
  const outcome: Outcome = { events: [], error: undefined, doneCalls: 0 };
  let finished!: () => void;
  const ended = new Promise<void>((resolve) => (finished = resolve));
  const controller = await rest.watch(
    "/api/v1/configmaps",
    query,
    (type, object) => outcome.events.push([type, object]),
    (error) => {
      outcome.doneCalls++;
      outcome.error = error;
      finished();
    },
    inactivityMs,
  );
  afterStart?.(controller);
  await ended;
  await new Promise((resolve) => setTimeout(resolve, 50));
  return outcome;
}

const event = (type: string, name: string) =>
  `${JSON.stringify({ type, object: { metadata: { name, resourceVersion: "1" } } })}\n`;

describe("KubeRest.watch", () => {
  it("asks for a watch with the query and the user's credentials", async () => {
    let seen: IncomingMessage | undefined;
    handler = (req, res) => {
      seen = req;
      res.end();
    };
    await watched({ labelSelector: "a=b", resourceVersion: "7", skipped: undefined });
    const url = new URL(seen?.url ?? "", "http://x");
    expect(url.pathname).toBe("/api/v1/configmaps");
    expect(Object.fromEntries(url.searchParams)).toEqual({
      labelSelector: "a=b",
      resourceVersion: "7",
      watch: "true",
    });
    expect(seen?.headers.authorization).toBe("Bearer t0ken");
  });

  it("hands over every event, also those split across chunks, and ends without an error", async () => {
    handler = (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      const text = event("ADDED", "one") + event("MODIFIED", "two") + event("DELETED", "three");
      res.write(text.slice(0, 10));
      setTimeout(() => res.write(text.slice(10, 70)), 20);
      setTimeout(() => res.end(text.slice(70)), 40);
    };
    const outcome = await watched();
    expect(outcome.events.map(([type, o]) => `${type} ${o.metadata?.name}`)).toEqual([
      "ADDED one",
      "MODIFIED two",
      "DELETED three",
    ]);
    expect(outcome.error).toBeUndefined();
    expect(outcome.doneCalls).toBe(1);
  });

  it("ends with the API server's status when it refuses the watch", async () => {
    handler = (_req, res) => {
      res.writeHead(410, { "content-type": "application/json" });
      res.end(JSON.stringify({ kind: "Status", code: 410, reason: "Expired", message: "too old" }));
    };
    const outcome = await watched();
    expect(outcome.error).toBeInstanceOf(KubeApiError);
    expect(outcome.error).toMatchObject({ code: 410, reason: "Expired", detail: "too old" });
  });

  it("ends with a TimeoutError when nothing comes for the inactivity timeout", async () => {
    handler = (_req, res) => {
      res.writeHead(200);
      res.write(event("ADDED", "one"));
    };
    const outcome = await watched({}, 300);
    expect(outcome.events).toHaveLength(1);
    expect((outcome.error as Error).name).toBe("TimeoutError");
    expect(outcome.doneCalls).toBe(1);
  });

  it("ends with an AbortError when its controller aborts it", async () => {
    handler = (_req, res) => {
      res.writeHead(200);
      res.write(event("ADDED", "one"));
    };
    const outcome = await watched({}, 5000, (controller) => setTimeout(() => controller.abort(), 50));
    expect((outcome.error as Error).name).toBe("AbortError");
    expect(outcome.doneCalls).toBe(1);
  });

  it("ends with an AbortError when its signal aborts before the API server answered", async () => {
    // Headers never sent: the controller is not handed out yet, the signal still ends the watch.
    handler = () => undefined;
    const stop = new AbortController();
    const outcome: Outcome = { events: [], error: undefined, doneCalls: 0 };
    setTimeout(() => stop.abort(), 50);
    const started = Date.now();
    await rest.watch(
      "/api/v1/configmaps",
      {},
      () => undefined,
      (error) => {
        outcome.doneCalls++;
        outcome.error = error;
      },
      5000,
      stop.signal,
    );
    expect(Date.now() - started).toBeLessThan(2000);
    expect((outcome.error as Error).name).toBe("AbortError");
    expect(outcome.doneCalls).toBe(1);
  });

  it("fails on a line that is no watch event instead of skipping it", async () => {
    handler = (_req, res) => {
      res.writeHead(200);
      res.end(`${event("ADDED", "one")}{"type":"ADDED"}\n${event("ADDED", "two")}`);
    };
    const outcome = await watched();
    expect(outcome.events).toHaveLength(1);
    expect((outcome.error as Error).message).toBe(
      "GET /api/v1/configmaps: a watch event without a type or an object",
    );
  });
});

describe("a request whose answer is discarded", () => {
  it("drops a successful body unread, and still reports a refusal with the server's message", async () => {
    let sent = 0;
    handler = (req, res) => {
      req.resume();
      sent++;
      if (req.method === "DELETE") {
        res.writeHead(404, { "content-type": "application/json" });
        res.end(JSON.stringify({ kind: "Status", reason: "NotFound", message: 'configmaps "x" not found' }));
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      // Not JSON: a parse would throw, so only an unread body gets through.
      res.end("{ this is not parsed");
    };
    const path = "/api/v1/namespaces/ns/configmaps/x/status";
    expect(await rest.request("PATCH", path, { body: {}, discard: true })).toBeUndefined();
    await expect(rest.request("PATCH", path, { body: {} })).rejects.toThrow(SyntaxError);
    const refused = await rest.request("DELETE", path, { discard: true }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(KubeApiError);
    expect(refused).toMatchObject({ code: 404, detail: 'configmaps "x" not found' });
    expect(sent).toBe(3);
  });
});

describe("the conventions of client-go", () => {
  const observed: string[] = [];
  const client = () => {
    const { port } = server.address() as AddressInfo;
    return new KubeRest(
      { ...testKubeconfig(`http://127.0.0.1:${port}`), user: { name: "u", token: "t0ken" } },
      ({ method, code, write }) => observed.push(`${method} ${code} ${write?.resource} ${write?.verb}`),
      "vhost-broker/1.2.3 (linux/amd64) leader-election",
    );
  };

  /** Answers each request with the next of `answers` (status and Retry-After), then 200 and no body. */
  function answering(...answers: [number, string?][]) {
    const seen: IncomingMessage[] = [];
    handler = (req, res) => {
      req.resume();
      seen.push(req);
      const [code, retryAfter] = answers.shift() ?? [200];
      res.writeHead(code, {
        "content-type": "application/json",
        ...(retryAfter === undefined ? {} : { "retry-after": retryAfter }),
      });
      res.end(code === 200 ? "" : JSON.stringify({ kind: "Status", reason: "TooManyRequests" }));
    };
    return seen;
  }

  it("names the process in the User-Agent of every request and watch; the controllers' by default", async () => {
    const seen = answering();
    const named = client();
    await named.request("GET", "/version");
    await watched();
    expect(seen.map((r) => r.headers["user-agent"])).toEqual([
      "vhost-broker/1.2.3 (linux/amd64) leader-election",
      expect.stringMatching(/^vhost-broker\/\d+\.\d+\.\d+\S* \([a-z0-9]+\/[a-z0-9]+\) controller$/),
    ]);
    await named.close();
  });

  it("sends a request again after the seconds a 429 or a 5xx asks for in Retry-After", async () => {
    observed.length = 0;
    const seen = answering([429, "1"], [503, "0"]);
    const patient = client();
    const started = Date.now();
    await patient.request("POST", "/api/v1/namespaces/ns/configmaps", { body: { a: 1 } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(seen).toHaveLength(3);
    // Each attempt is a request, as client-go counts them.
    expect(observed).toEqual([
      "POST 429 configmaps create",
      "POST 503 configmaps create",
      "POST 200 configmaps create",
    ]);
    await patient.close();
  });

  it("retries a watch refused with Retry-After as well", async () => {
    const seen = answering([429, "0"]);
    const outcome = await watched();
    expect(seen).toHaveLength(2);
    expect(outcome.error).toBeUndefined();
  });

  it("fails at once without Retry-After, or after ten retries, or when the request's deadline ends the wait", async () => {
    const once = answering([429]);
    await expect(rest.request("GET", "/api/v1/configmaps")).rejects.toMatchObject({ code: 429 });
    expect(once).toHaveLength(1);

    const always = answering(...Array.from({ length: 20 }, (): [number, string] => [429, "0"]));
    await expect(rest.request("GET", "/api/v1/configmaps")).rejects.toMatchObject({ code: 429 });
    expect(always).toHaveLength(11);

    // An hour asked for is waited 10 s at most, and never past the request's own signal.
    const long = answering([429, "3600"]);
    const started = Date.now();
    const late = await rest
      .request("GET", "/api/v1/configmaps", { signal: AbortSignal.timeout(200) })
      .catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(2000);
    expect((late as Error).message).toMatch(/^GET \/api\/v1\/configmaps: /);
    expect(((late as Error).cause as Error).name).toBe("TimeoutError");
    expect(long).toHaveLength(1);
  });
});
