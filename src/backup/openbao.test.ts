// The login and token handling of the OpenBao store, against a small fake of OpenBao's HTTP API on
// loopback (the real OpenBao is exercised in test/backup). The fake grants tokens it issued and refuses
// the rest, like OpenBao does.
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openBaoStore } from "./openbao.ts";
import { BackupError } from "./store.ts";

interface Seen {
  method: string;
  url: string;
  token: string | undefined;
  body: Record<string, unknown> | undefined;
}

const jwt = "eyJ-service-account-jwt-" + "x".repeat(20);
let server: Server;
let address = "";
let seen: Seen[] = [];
let issued = 0;
const valid = new Set<string>();
let kvBody: unknown = { data: { version: 1 } };

beforeAll(async () => {
  server = createServer((req, res) => {
    let text = "";
    req.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
    req.on("end", () => {
      const body = text ? (JSON.parse(text) as Record<string, unknown>) : undefined;
      const token = req.headers["x-vault-token"] as string | undefined;
      seen.push({ method: req.method ?? "", url: req.url ?? "", token, body });
      const send = (status: number, payload: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(payload));
      };
      if (req.url === "/v1/auth/kubernetes/login") {
        if (body?.role !== "vb" || body.jwt !== jwt)
          return send(400, { errors: [`invalid role name "${body?.role}"`] });
        const t = `tok-${++issued}`;
        valid.add(t);
        return send(200, { auth: { client_token: t, lease_duration: 600 } });
      }
      if (req.url?.startsWith("/v1/sys/health")) return send(200, { initialized: true, sealed: false });
      if (!token || !valid.has(token)) return send(403, { errors: ["permission denied"] });
      if (req.url === "/v1/auth/token/lookup-self") return send(200, { data: { ttl: 600 } });
      return send(200, kvBody);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const a = server.address();
  address = `http://127.0.0.1:${typeof a === "object" && a ? a.port : 0}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function store(options: { role?: string; clock?: { t: number }; reads?: { n: number } } = {}) {
  seen = [];
  kvBody = { data: { version: 1 } };
  return openBaoStore(
    {
      address,
      auth: {
        method: "kubernetes",
        role: options.role ?? "vb",
        tokenFile: "/sa/token",
        mountPath: "kubernetes",
      },
      mount: "kv-v2",
      timeoutMs: 2_000,
    },
    {
      readTokenFile: async (path) => {
        expect(path).toBe("/sa/token");
        if (options.reads) options.reads.n++;
        return `${jwt}\n`;
      },
      clock: { monotonic: () => options.clock?.t ?? 0 },
    },
  );
}

const logins = () => seen.filter((s) => s.url === "/v1/auth/kubernetes/login");

describe("Kubernetes auth", () => {
  it("logs in with the role and the service-account token, and uses the token it gets", async () => {
    const s = store();
    expect(await s.health()).toEqual({ ready: true, state: "ready" });
    expect(await s.write("a/b", { password: "p" })).toEqual({ version: 1, metadata: {} });
    expect(logins()).toHaveLength(1);
    expect(logins()[0]?.body).toEqual({ role: "vb", jwt });
    expect(logins()[0]?.token).toBeUndefined();
    const token = `tok-${issued}`;
    expect(seen.filter((r) => r.url.startsWith("/v1/kv-v2/")).map((r) => [r.method, r.url, r.token])).toEqual(
      [["POST", "/v1/kv-v2/data/a/b", token]],
    );
  });

  it("logs in again, reading the token file again, before the lease ends", async () => {
    const clock = { t: 0 };
    const reads = { n: 0 };
    const s = store({ clock, reads });
    await s.write("a/b", { password: "p" });
    clock.t = 500_000;
    await s.write("a/b", { password: "p" });
    expect(logins()).toHaveLength(1);
    clock.t = 571_000; // within 30 s of the 600 s lease
    await s.write("a/b", { password: "p" });
    expect(logins()).toHaveLength(2);
    expect(reads.n).toBe(2);
  });

  it("replaces a token OpenBao stopped honouring, once", async () => {
    const s = store();
    await s.write("a/b", { password: "p" });
    valid.clear();
    expect(await s.write("a/b", { password: "p" })).toEqual({ version: 1, metadata: {} });
    expect(logins()).toHaveLength(2);
  });

  it("shares one login between concurrent calls", async () => {
    const s = store();
    await Promise.all([s.write("a/b", { password: "p" }), s.write("a/c", { password: "p" }), s.health()]);
    expect(logins()).toHaveLength(1);
  });

  it("reports a refused login as auth-refused without the service-account token", async () => {
    const s = store({ role: "nobody" });
    const health = await s.health();
    expect(health).toEqual({
      ready: false,
      state: "auth-refused",
      message:
        'OpenBao refused the Kubernetes login with role "nobody" with status 400: invalid role name "nobody"',
    });
    const err = await s.write("a/b", { password: "p" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BackupError);
    expect(JSON.stringify({ ...(err as object), message: String(err) })).not.toContain(jwt);
  });

  it("reports an unreadable token file as auth-refused", async () => {
    const s = openBaoStore(
      {
        address,
        auth: { method: "kubernetes", role: "vb", tokenFile: "/nowhere", mountPath: "kubernetes" },
        mount: "kv-v2",
        timeoutMs: 2_000,
      },
      { readTokenFile: () => Promise.reject(new Error("ENOENT")) },
    );
    expect(await s.health()).toEqual({
      ready: false,
      state: "auth-refused",
      message: "the service-account token file /nowhere cannot be read",
    });
  });
});

describe("responses", () => {
  it("refuses an unexpected body, naming the fields but no values", async () => {
    const s = store();
    await s.health();
    kvBody = {
      data: { data: { password: 42 }, metadata: { version: 1, destroyed: false, deletion_time: "" } },
    };
    const err = await s.read("a/b").catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: "invalid-response" });
    expect(String(err)).toBe(
      'BackupError: OpenBao answered the read of "a/b" with an unexpected body: data.data.password invalid_type',
    );
  });

  it("writes custom_metadata with a POST on metadata/, and reads it from the write's and the read's answers", async () => {
    const s = store();
    await s.describe("a/b", { kind: "RabbitMQVhost", generation: "2" });
    const call = seen.find((r) => r.url.startsWith("/v1/kv-v2/"));
    expect([call?.method, call?.url, call?.body]).toEqual([
      "POST",
      "/v1/kv-v2/metadata/a/b",
      { custom_metadata: { kind: "RabbitMQVhost", generation: "2" } },
    ]);
    kvBody = { data: { version: 4, custom_metadata: { generation: "2" } } };
    expect(await s.write("a/b", { password: "p" })).toEqual({ version: 4, metadata: { generation: "2" } });
    kvBody = {
      data: {
        data: { password: "p" },
        metadata: { version: 4, destroyed: false, deletion_time: "", custom_metadata: null },
      },
    };
    expect(await s.read("a/b")).toEqual({ version: 4, data: { password: "p" }, metadata: {} });
  });

  it("reads a soft-deleted latest version as absent", async () => {
    const s = store();
    await s.health();
    kvBody = {
      data: { data: null, metadata: { version: 3, destroyed: false, deletion_time: "2030-01-01T00:00:00Z" } },
    };
    expect(await s.read("a/b")).toBeUndefined();
  });
});

describe("a store that does not answer", () => {
  it("reports unreachable after the timeout, without the token or the written value", async () => {
    // Accepts connections and never answers.
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const a = silent.address();
    const at = `http://127.0.0.1:${typeof a === "object" && a ? a.port : 0}`;
    try {
      const s = openBaoStore({
        address: at,
        auth: { method: "token", token: "root-token-123" },
        mount: "kv-v2",
        timeoutMs: 200,
      });
      const err = await s.write("a/b", { password: "hunter2-secret" }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BackupError);
      expect(err).toMatchObject({ kind: "unreachable" });
      expect(String(err)).toMatch(new RegExp(`^BackupError: OpenBao at ${at} is unreachable \\(\\w+\\)`));
      const everything = JSON.stringify({
        ...(err as object),
        message: String(err),
        stack: (err as Error).stack,
      });
      expect(everything).not.toContain("root-token-123");
      expect(everything).not.toContain("hunter2-secret");
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});
