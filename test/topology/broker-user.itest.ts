// Users on the local RabbitMQ: declared with salted SHA-512 hashes, proven by AMQP logins; the
// SHA-256 verifier checked against a hash the broker made itself; limits; the guest deletion.
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  SHA256_ALGORITHM,
  SHA512_ALGORITHM,
  apiPath,
  declarePermission,
  declareUser,
  declareVhost,
  deleteGuestUser,
  deleteUser,
  deleteVhost,
  hashPasswordSha512,
  readBackUser,
  verifyPassword,
  type UserSpec,
} from "../../src/topology/broker/index.ts";
import { admin, canLogIn, clients, env, unique } from "./broker-support.ts";

const cleanups: (() => Promise<unknown>)[] = [];
const storedUser = z.looseObject({ password_hash: z.string(), hashing_algorithm: z.string() });

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(() => clients.close());

/** A vhost and a user with full permissions on it, both removed after the test. */
async function userWithVhost(spec: Omit<UserSpec, "username">): Promise<{ vhost: string; user: UserSpec }> {
  const vhost = unique("user-vhost");
  const user = { ...spec, username: unique("user") };
  await declareVhost(admin, { name: vhost });
  cleanups.push(() => deleteVhost(admin, vhost));
  await declareUser(admin, user);
  cleanups.push(() => deleteUser(admin, user.username));
  await declarePermission(admin, {
    user: user.username,
    vhost,
    permissions: { configure: ".*", write: ".*", read: ".*" },
  });
  return { vhost, user };
}

describe("user", () => {
  it("is stored as a salted SHA-512 hash that logs in over AMQP, and a wrong password is refused", async () => {
    const password = `pw-${Math.random().toString(36).slice(2)}`;
    const { vhost, user } = await userWithVhost({ credentials: { password } });
    const stored = await admin.get(apiPath("users", user.username), storedUser);
    expect(stored.hashing_algorithm).toBe(SHA512_ALGORITHM);
    expect(verifyPassword(password, stored.password_hash, SHA512_ALGORITHM)).toBe(true);
    expect(await readBackUser(admin, user)).toEqual({ exists: true, matches: true, differences: [] });
    expect(await canLogIn(user.username, password, vhost)).toBe(true);
    expect(await canLogIn(user.username, `${password}x`, vhost)).toBe(false);
  });

  it("takes a new password on redeclaration: the new one logs in, the old one is refused", async () => {
    const { vhost, user } = await userWithVhost({ credentials: { password: "first-password" } });
    const rotated: UserSpec = { ...user, credentials: { password: "second-password" } };
    expect((await readBackUser(admin, rotated)).differences).toEqual(["password"]);
    await declareUser(admin, rotated);
    expect(await readBackUser(admin, rotated)).toMatchObject({ matches: true });
    expect(await canLogIn(user.username, "second-password", vhost)).toBe(true);
    expect(await canLogIn(user.username, "first-password", vhost)).toBe(false);
  });

  it("stores a given passwordHash as it is", async () => {
    const passwordHash = hashPasswordSha512("hashed-elsewhere");
    const { vhost, user } = await userWithVhost({ credentials: { passwordHash }, tags: ["monitoring"] });
    expect(await admin.get(apiPath("users", user.username), storedUser)).toMatchObject({
      password_hash: passwordHash,
      hashing_algorithm: SHA512_ALGORITHM,
    });
    expect(await readBackUser(admin, user)).toMatchObject({ matches: true });
    expect(await canLogIn(user.username, "hashed-elsewhere", vhost)).toBe(true);
  });

  it("changes tags and applies and removes limits", async () => {
    const { user } = await userWithVhost({
      credentials: { password: "p" },
      tags: ["management", "policymaker"],
      limits: { connections: 3, channels: 7 },
    });
    const limits = () => admin.get(apiPath("user-limits", user.username), z.unknown());
    expect(await limits()).toEqual([
      { user: user.username, value: { "max-connections": 3, "max-channels": 7 } },
    ]);
    expect(
      await admin.get(apiPath("users", user.username), z.looseObject({ tags: z.unknown() })),
    ).toMatchObject({
      tags: ["management", "policymaker"],
    });
    const changed: UserSpec = { ...user, tags: ["policymaker"], limits: { channels: 9 } };
    expect((await readBackUser(admin, changed)).differences).toEqual([
      "tags",
      "limits.max-connections",
      "limits.max-channels",
    ]);
    await declareUser(admin, changed);
    expect(await readBackUser(admin, changed)).toMatchObject({ matches: true });
    expect(await limits()).toEqual([{ user: user.username, value: { "max-channels": 9 } }]);
    await declareUser(admin, { ...changed, limits: undefined });
    expect(await limits()).toEqual([]);
  });

  it("verifies a SHA-256 hash the broker made from a plain password", async () => {
    const username = unique("plain");
    await admin.put(apiPath("users", username), { password: "broker-hashed", tags: "" });
    cleanups.push(() => deleteUser(admin, username));
    const stored = await admin.get(apiPath("users", username), storedUser);
    expect(stored.hashing_algorithm).toBe(SHA256_ALGORITHM);
    expect(verifyPassword("broker-hashed", stored.password_hash, SHA256_ALGORITHM)).toBe(true);
    expect(verifyPassword("broker-hashed!", stored.password_hash, SHA256_ALGORITHM)).toBe(false);
    // a read back accepts the password whatever algorithm holds it
    expect(await readBackUser(admin, { username, credentials: { password: "broker-hashed" } })).toMatchObject(
      {
        matches: true,
      },
    );
  });

  it("is deleted, then absent", async () => {
    const username = unique("deleted");
    const spec = { username, credentials: { password: "p" } };
    await declareUser(admin, spec);
    expect(await deleteUser(admin, username)).toBe("deleted");
    expect(await readBackUser(admin, spec)).toEqual({ exists: false, matches: false, differences: [] });
    expect(await deleteUser(admin, username)).toBe("absent");
  });
});

describe("guest deletion", () => {
  it("deletes the named default user, and never the user the client logs in as", async () => {
    // A stand-in name: the shared broker's real guest is left to the controller that owns it.
    const guest = unique("guest");
    await declareUser(admin, { username: guest, credentials: { password: "guest" } });
    cleanups.push(() => deleteUser(admin, guest));
    expect(await deleteGuestUser(admin, guest)).toBe("deleted");
    expect(await readBackUser(admin, { username: guest, credentials: { password: "guest" } })).toMatchObject({
      exists: false,
    });
    expect(await deleteGuestUser(admin, guest)).toBe("absent");
    expect(await deleteGuestUser(admin, env.RABBITMQ_ADMIN_USERNAME)).toBe("skipped");
    expect(await admin.find(apiPath("users", env.RABBITMQ_ADMIN_USERNAME), storedUser)).toBeDefined();
  });
});
