// The chaos suite's instrument on the real broker: a probe connects, opens the vhost, declares a queue,
// publishes one message and consumes it back, so a refused login, a refused vhost (530 NOT_ALLOWED) and a
// refused configure, write or read permission (403 ACCESS_REFUSED on the channel) are each an
// authentication failure, and nothing the prober records carries a password.
import { randomBytes } from "node:crypto";
import { createServer, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localEnv } from "../harness/world/env.ts";
import { eventually, freshNamespace, testCluster, type TestCluster } from "../harness/world/kube.ts";
import { amqpLogin, LoginProber, type LoginOutcome } from "../harness/probes/login-prober.ts";

const suffix = randomBytes(3).toString("hex");
const VHOST = `prober-${suffix}`;
/** Each user's permissions on VHOST (configure, write, read), or none at all. */
const USERS = {
  good: [".*", ".*", ".*"],
  nopermission: undefined,
  noconfigure: ["", ".*", ".*"],
  nowrite: [".*", "", ".*"],
  noread: [".*", ".*", ""],
} as const;
type UserKey = keyof typeof USERS;

const username = (key: UserKey) => `prober-${key}-${suffix}`;
// Characters a URL must escape, so that the probe is seen to decode them.
const passwordOf = (key: UserKey) => `pw/${key}:${randomBytes(9).toString("hex")}@`;
const passwords = Object.fromEntries(Object.keys(USERS).map((k) => [k, passwordOf(k as UserKey)])) as Record<
  UserKey,
  string
>;

const wrongPassword = `wrong-${randomBytes(9).toString("hex")}`;

function managementApi() {
  const env = localEnv();
  const authorization = `Basic ${Buffer.from(`${env.RABBITMQ_ADMIN_USERNAME}:${env.RABBITMQ_ADMIN_PASSWORD}`).toString("base64")}`;
  return async (method: string, path: string, body?: unknown): Promise<void> => {
    const res = await fetch(`${env.RABBITMQ_MANAGEMENT_URL.replace(/\/$/, "")}${path}`, {
      method,
      headers: { authorization, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    await res.arrayBuffer();
    if (!res.ok && !(method === "DELETE" && res.status === 404)) {
      throw new Error(`${method} ${path}: HTTP ${res.status}`);
    }
  };
}

function transportUrl(user: string, password: string, vhost = VHOST, port?: number): string {
  const amqp = new URL(localEnv().RABBITMQ_URL);
  return (
    `rabbit://${encodeURIComponent(user)}:${encodeURIComponent(password)}@${amqp.hostname}:` +
    `${port ?? (Number(amqp.port) || 5672)}/${encodeURIComponent(vhost)}`
  );
}

const urlOf = (key: UserKey) => transportUrl(username(key), passwords[key]);

/** Every password this file made, raw and as a URL carries it. */
function expectNoPassword(text: string): void {
  for (const password of [...Object.values(passwords), wrongPassword]) {
    expect(text).not.toContain(password);
    expect(text).not.toContain(encodeURIComponent(password));
  }
}

describe("the login prober on the real broker", () => {
  const api = managementApi();
  let cluster: TestCluster | undefined;
  let namespace: string | undefined;

  beforeAll(async () => {
    await api("PUT", `/api/vhosts/${encodeURIComponent(VHOST)}`, {});
    for (const [key, permissions] of Object.entries(USERS) as [UserKey, readonly string[] | undefined][]) {
      await api("PUT", `/api/users/${encodeURIComponent(username(key))}`, {
        password: passwords[key],
        tags: "",
      });
      if (permissions) {
        const [configure, write, read] = permissions;
        await api(
          "PUT",
          `/api/permissions/${encodeURIComponent(VHOST)}/${encodeURIComponent(username(key))}`,
          {
            configure,
            write,
            read,
          },
        );
      }
    }
    cluster = testCluster("management");
    namespace = await freshNamespace(cluster, "prober");
  });

  afterAll(async () => {
    for (const key of Object.keys(USERS) as UserKey[]) {
      await api("DELETE", `/api/users/${encodeURIComponent(username(key))}`).catch(() => undefined);
    }
    await api("DELETE", `/api/vhosts/${encodeURIComponent(VHOST)}`).catch(() => undefined);
    if (cluster && namespace) await cluster.core.deleteNamespace({ name: namespace }).catch(() => undefined);
  });

  it("succeeds for a user with every permission on the vhost", async () => {
    expect(await amqpLogin(urlOf("good"))).toEqual({ kind: "ok" });
  });

  it("leaves no queue behind", async () => {
    expect(await amqpLogin(urlOf("good"))).toEqual({ kind: "ok" });
    const env = localEnv();
    const authorization = `Basic ${Buffer.from(`${env.RABBITMQ_ADMIN_USERNAME}:${env.RABBITMQ_ADMIN_PASSWORD}`).toString("base64")}`;
    const url = `${env.RABBITMQ_MANAGEMENT_URL.replace(/\/$/, "")}/api/queues/${encodeURIComponent(VHOST)}`;
    await eventually(
      "no queue in the vhost",
      async () => {
        const queues = (await (await fetch(url, { headers: { authorization } })).json()) as unknown[];
        return queues.length === 0 ? true : undefined;
      },
      10_000,
    );
  });

  it("counts a wrong password as an authentication failure", async () => {
    const outcome = await amqpLogin(transportUrl(username("good"), wrongPassword));
    console.log(`wrong password: ${JSON.stringify(outcome)}`);
    expect(outcome.kind).toBe("auth");
    expect(outcome).toMatchObject({ message: expect.stringMatching(/^connect: .*ACCESS.REFUSED/) });
  });

  it("counts a refused vhost (530 NOT_ALLOWED) as an authentication failure", async () => {
    const noPermission = await amqpLogin(urlOf("nopermission"));
    const missing = await amqpLogin(transportUrl(username("good"), passwords.good, `${VHOST}-missing`));
    console.log(`no permission on the vhost: ${JSON.stringify(noPermission)}`);
    console.log(`no such vhost: ${JSON.stringify(missing)}`);
    for (const outcome of [noPermission, missing]) {
      expect(outcome.kind).toBe("auth");
      expect(outcome).toMatchObject({
        message: expect.stringMatching(/^connect: the broker refused the vhost/),
      });
    }
  });

  it("counts a refused configure, write or read permission as an authentication failure", async () => {
    const outcomes: Partial<Record<UserKey, LoginOutcome>> = {};
    for (const key of ["noconfigure", "nowrite", "noread"] as const) {
      outcomes[key] = await amqpLogin(urlOf(key));
      console.log(`${key}: ${JSON.stringify(outcomes[key])}`);
    }
    // RabbitMQ 4.x names the permission refused ("configure access to queue …"); 3.x does not.
    const refused = (step: string, permission: string, what: string) => ({
      kind: "auth",
      message: expect.stringMatching(
        new RegExp(`^${step}: .*ACCESS_REFUSED - (${permission} )?access to ${what}`),
      ) as unknown,
    });
    expect(outcomes.noconfigure).toEqual(refused("declare", "configure", "queue"));
    expect(outcomes.nowrite).toEqual(refused("publish", "write", "exchange 'amq.default'"));
    expect(outcomes.noread).toEqual(refused("consume", "read", "queue"));
  });

  it("counts an unreachable or silent broker as another failure", async () => {
    const closedPort = await new Promise<number>((resolve) => {
      const server = createServer();
      server.listen(0, "127.0.0.1", () => {
        const address = server.address();
        server.close(() => resolve(typeof address === "object" && address ? address.port : 1));
      });
    });
    const refused = await amqpLogin(transportUrl(username("good"), passwords.good, VHOST, closedPort));
    expect(refused).toMatchObject({
      kind: "other",
      message: expect.stringMatching(/^connect: .*ECONNREFUSED/),
    });

    // A broker that accepts TCP and never answers.
    const sockets: Socket[] = [];
    const silent: Server = createServer((socket) => sockets.push(socket));
    const port = await new Promise<number>((resolve) =>
      silent.listen(0, "127.0.0.1", () => {
        const address = silent.address();
        resolve(typeof address === "object" && address ? address.port : 1);
      }),
    );
    try {
      const started = Date.now();
      const outcome = await amqpLogin(transportUrl(username("good"), passwords.good, VHOST, port));
      console.log(`silent broker: ${JSON.stringify(outcome)} after ${Date.now() - started} ms`);
      expect(outcome.kind).toBe("other");
      expect(Date.now() - started).toBeLessThan(12_000);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it("records no password in the prober's counts", async () => {
    if (!cluster || !namespace) throw new Error("no cluster");
    const orders: Record<string, { user: string; password: string }> = {
      good: { user: username("good"), password: passwords.good },
      wrong: { user: username("good"), password: wrongPassword },
      vhost: { user: username("nopermission"), password: passwords.nopermission },
      write: { user: username("nowrite"), password: passwords.nowrite },
    };
    for (const [order, { user, password }] of Object.entries(orders)) {
      await cluster.core.createNamespacedSecret({
        namespace,
        body: {
          metadata: { name: `${order}-credentials` },
          stringData: { username: user, password, transport_url: transportUrl(user, password) },
        },
      });
    }
    const seen: string[] = [];
    const counts = Object.fromEntries(
      await Promise.all(
        Object.keys(orders).map(async (order) => {
          const prober = new LoginProber({
            core: cluster?.core ?? testCluster("management").core,
            namespace: namespace ?? "",
            order,
            intervalMs: 20,
            maxAttempts: 3,
            onOutcome: (outcome) => seen.push(JSON.stringify(outcome)),
          });
          return [order, await prober.start().finished()] as const;
        }),
      ),
    );
    console.log(JSON.stringify(counts, null, 2));
    expect(counts["good"]).toMatchObject({ attempts: 3, successes: 3, authFailures: 0, otherFailures: 0 });
    for (const order of ["wrong", "vhost", "write"]) {
      expect(counts[order]).toMatchObject({ attempts: 3, successes: 0, authFailures: 3, otherFailures: 0 });
      expect(counts[order]?.failureMessages.length).toBeGreaterThan(0);
    }
    expectNoPassword(JSON.stringify(counts));
    expectNoPassword(seen.join("\n"));
  });
});
