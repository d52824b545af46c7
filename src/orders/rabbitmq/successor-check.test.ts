// The hash check against a node whose copy of the user lags (RabbitMQ 4.x reads are local to the node
// asked): a loopback server answers as such a node would, stale first, then current.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManagementClients } from "../../rabbitmq/client.ts";
import { hashPasswordSha512, SHA512_ALGORITHM } from "../../rabbitmq/password.ts";
import { hashCheck, permissionCheck } from "./successor-check.ts";

type Answer = { status: number; body?: unknown };

const clients = new ManagementClients({ requestTimeoutMs: 2_000 });
const login = { host: "h", port: 5672, resource: "v", username: "app-v2", password: "successor-pw" };
const current: Answer = {
  status: 200,
  body: {
    name: "app-v2",
    password_hash: hashPasswordSha512(login.password),
    hashing_algorithm: SHA512_ALGORITHM,
  },
};
const other: Answer = {
  status: 200,
  body: {
    name: "app-v2",
    password_hash: hashPasswordSha512("older-pw"),
    hashing_algorithm: SHA512_ALGORITHM,
  },
};
const absent: Answer = { status: 404, body: { error: "Object Not Found", reason: "Not Found" } };

let answers: Answer[] = [];
let reads = 0;
let permissionAnswers: Answer[] = [];
let permissionReads = 0;
let server: Server;
let url = "";

beforeAll(async () => {
  server = createServer((req, res) => {
    const permission = req.url === "/api/permissions/v/app-v2";
    if (!permission) expect(req.url).toBe("/api/users/app-v2");
    const queue = permission ? permissionAnswers : answers;
    if (permission) permissionReads++;
    else reads++;
    const answer = queue.length > 1 ? queue.shift()! : queue[0]!;
    res.writeHead(answer.status, { "content-type": "application/json" });
    res.end(JSON.stringify(answer.body ?? {}));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await clients.close();
  await new Promise((resolve) => server.close(resolve));
});

const check = (sequence: Answer[], timeoutMs = 5_000) => {
  answers = sequence;
  reads = 0;
  const client = clients.client({ url, username: "admin", password: "admin-pw" });
  return hashCheck(client, login, timeoutMs, { reads: 4, gapMs: 20 });
};

describe("the successor's hash check on a lagging node", () => {
  it("reads again when the user is not there yet, and accepts once it is", async () => {
    expect(await check([absent, absent, current])).toEqual({ accepted: true });
    expect(reads).toBe(3);
  });

  it("reads again when another hash is stored, and accepts the current one", async () => {
    expect(await check([other, current])).toEqual({ accepted: true });
    expect(reads).toBe(2);
  });

  it("accepts at the first read without waiting", async () => {
    expect(await check([current])).toEqual({ accepted: true });
    expect(reads).toBe(1);
  });

  it("refuses after its bounded reads when the answer stays stale", async () => {
    expect(await check([other])).toEqual({
      accepted: false,
      reason: 'the broker holds another password for user "app-v2"',
    });
    expect(reads).toBe(4);
    expect(await check([absent])).toEqual({ accepted: false, reason: 'the broker holds no user "app-v2"' });
    expect(reads).toBe(4);
  });

  it("stops reading at the check's deadline", async () => {
    answers = [absent];
    reads = 0;
    const client = clients.client({ url, username: "admin", password: "admin-pw" });
    const got = await hashCheck(client, login, 150, { reads: 100, gapMs: 100 });
    expect(got.accepted).toBe(false);
    expect(reads).toBeLessThanOrEqual(2);
  });

  it("does not read again after a failure that is no answer about the user, and names no password", async () => {
    const got = await check([{ status: 401, body: { error: "not_authorised", reason: "Login failed" } }]);
    expect(got).toEqual({
      accepted: false,
      reason: 'the check of user "app-v2" on the broker\'s management API failed (HTTP 401 Login failed)',
    });
    expect(reads).toBe(1);
    expect(JSON.stringify(got)).not.toMatch(/admin-pw|successor-pw/);
  });
});

describe("the successor's permission check", () => {
  const granted: Answer = {
    status: 200,
    body: { user: "app-v2", vhost: "v", configure: ".*", write: ".*", read: ".*" },
  };
  const permissions = (sequence: Answer[]) => {
    permissionAnswers = sequence;
    permissionReads = 0;
    const client = clients.client({ url, username: "admin", password: "admin-pw" });
    return permissionCheck(client, login, 5_000, { reads: 3, gapMs: 20 });
  };

  it("accepts a user with a permission on the vhost", async () => {
    expect(await permissions([granted])).toEqual({ accepted: true });
    expect(permissionReads).toBe(1);
  });

  it("reads again while no permission is there, and accepts once it is", async () => {
    expect(await permissions([absent, granted])).toEqual({ accepted: true });
    expect(permissionReads).toBe(2);
  });

  it("refuses a user without a permission on the vhost after its reads (a user made again lost it)", async () => {
    expect(await permissions([absent])).toEqual({
      accepted: false,
      reason: 'the broker holds no permission of user "app-v2" on vhost "v"',
    });
    expect(permissionReads).toBe(3);
  });
});
