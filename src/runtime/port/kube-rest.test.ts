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
