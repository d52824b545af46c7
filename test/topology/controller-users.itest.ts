// Users and Permissions through the topology controller: imported credentials (and their rotation
// reaching the broker through the Secret watch), generated credentials that are never regenerated,
// Permissions by user name and by userReference, and no password in a condition or a log line.
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { permissionKind, topologyKinds, userKind, vhostKind } from "../../src/api/index.ts";
import { apiPath, deleteUser, deleteVhost, hashPasswordSha512 } from "../../src/topology/broker/index.ts";
import { generatedSecretName, topologyControllerKinds, topologyKind } from "../../src/topology/index.ts";
import { reconcileExternal } from "../../src/external/index.ts";
import {
  admin,
  canLogIn,
  cluster,
  condition,
  createResource,
  custom,
  deleteResource,
  getResource,
  logLinesHolding,
  makeDeps,
  patchSpec,
  setUpNamespace,
  settle,
  tearDownNamespace,
  unique,
} from "./controller-harness.ts";

const ref = { rabbitmqClusterReference: { name: "rabbitmq" } };
const userAnswer = z.looseObject({ name: z.string(), tags: z.array(z.string()) });
const hashAnswer = z.looseObject({ password_hash: z.string() });
const permissionAnswer = z.looseObject({ configure: z.string(), write: z.string(), read: z.string() });

let namespace = "";
let vhost = "";
const deps = makeDeps();
const passwords: string[] = [];
const brokerUsers: string[] = [];

beforeAll(async () => {
  namespace = await setUpNamespace("topo-users");
  vhost = unique("users");
  await createResource(vhostKind, namespace, vhost, { name: vhost, ...ref });
  await settle(topologyKind.vhost, deps, namespace, vhost);
});
afterAll(async () => {
  await tearDownNamespace(namespace, topologyKinds);
  await deleteVhost(admin, vhost).catch(() => undefined);
  for (const user of brokerUsers) await deleteUser(admin, user).catch(() => undefined);
});

async function credentialsSecret(name: string, username: string, password: string, labelled = true) {
  passwords.push(password);
  const body: k8s.V1Secret = {
    metadata: { name, namespace, labels: labelled ? { "rabbitmq.com/topology-operator": "true" } : {} },
    stringData: { username, password },
  };
  await cluster.core.createNamespacedSecret({ namespace, body });
}

async function grantAll(user: string) {
  const name = unique("perm");
  await createResource(permissionKind, namespace, name, {
    user,
    vhost,
    permissions: { configure: ".*", write: ".*", read: ".*" },
    ...ref,
  });
  await settle(topologyKind.permission, deps, namespace, name);
}

describe("User", () => {
  it("imports its credentials, and a new password in the Secret reaches the broker at once", async () => {
    const name = unique("user-import");
    const secret = `${name}-import`;
    const username = unique("imported");
    brokerUsers.push(username);
    const oldPassword = `old-${Math.random().toString(36).slice(2)}`;
    await credentialsSecret(secret, username, oldPassword);
    await createResource(userKind, namespace, name, { importCredentialsSecret: { name: secret }, ...ref });
    await settle(topologyKind.user, deps, namespace, name);
    const user = await getResource(userKind, namespace, name);
    expect(condition(user, "Ready")).toMatchObject({ status: "True", reason: "SuccessfulCreateOrUpdate" });
    expect(condition(user, "PasswordSynced")).toMatchObject({
      status: "True",
      reason: "SuccessfulPasswordSync",
    });
    expect(user?.status).toMatchObject({ username, credentials: { name: secret }, observedGeneration: 1 });
    await grantAll(username);
    expect(await canLogIn(username, oldPassword, vhost)).toBe(true);

    const newPassword = `new-${Math.random().toString(36).slice(2)}`;
    passwords.push(newPassword);
    await cluster.core.patchNamespacedSecret(
      { namespace, name: secret, body: { stringData: { password: newPassword } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
    // The wiring's Secret watch enqueues the Users whose secretsOf names the Secret.
    const users = topologyControllerKinds.find((k) => k.kind.kind === "User");
    expect(users?.secretsOf(await getResource(userKind, namespace, name))).toEqual([
      { namespace, name: secret },
    ]);
    // Within the verification period, so only the Secret's new resourceVersion makes it go to the broker.
    await settle(topologyKind.user, deps, namespace, name);
    expect(await canLogIn(username, newPassword, vhost)).toBe(true);
    expect(await canLogIn(username, oldPassword, vhost)).toBe(false);

    await deleteResource(userKind, namespace, name);
    await settle(topologyKind.user, deps, namespace, name);
    expect(await getResource(userKind, namespace, name)).toBeUndefined();
    expect(await admin.find(apiPath("users", username), userAnswer)).toBeUndefined();
  });

  it("replaces the broker user when the import Secret names another username", async () => {
    const name = unique("user-rename");
    const secret = `${name}-import`;
    const [first, second] = [unique("first"), unique("second")];
    brokerUsers.push(first, second);
    const password = `rename-${Math.random().toString(36).slice(2)}`;
    await credentialsSecret(secret, first, password);
    await createResource(userKind, namespace, name, { importCredentialsSecret: { name: secret }, ...ref });
    await settle(topologyKind.user, deps, namespace, name);
    expect(await admin.find(apiPath("users", first), userAnswer)).toMatchObject({ name: first });

    await cluster.core.patchNamespacedSecret(
      { namespace, name: secret, body: { stringData: { username: second } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
    await settle(topologyKind.user, deps, namespace, name);
    expect((await getResource(userKind, namespace, name))?.status?.username).toBe(second);
    expect(await admin.find(apiPath("users", second), userAnswer)).toMatchObject({ name: second });
    expect(await admin.find(apiPath("users", first), userAnswer)).toBeUndefined();
    await grantAll(second);
    expect(await canLogIn(second, password, vhost)).toBe(true);
  });

  it("refuses an unlabelled import Secret with Ready False", async () => {
    const name = unique("user-unlabelled");
    await credentialsSecret(
      `${name}-import`,
      unique("unlabelled"),
      `pw-${Math.random().toString(36).slice(2)}`,
      false,
    );
    await createResource(userKind, namespace, name, {
      importCredentialsSecret: { name: `${name}-import` },
      ...ref,
    });
    const settled = await settle(topologyKind.user, deps, namespace, name);
    expect(settled.terminal).toBeDefined();
    expect(condition(await getResource(userKind, namespace, name), "Ready")).toMatchObject({
      status: "False",
      message: expect.stringMatching(/must carry the label rabbitmq.com\/topology-operator/),
    });
  });

  it("reads the import Secret's keys as upstream: passwordHash wins over password, username is required", async () => {
    const name = unique("user-hash");
    const username = unique("hashed");
    brokerUsers.push(username);
    const password = `hash-${Math.random().toString(36).slice(2)}`;
    const ignored = `ignored-${Math.random().toString(36).slice(2)}`;
    passwords.push(password, ignored);
    const passwordHash = hashPasswordSha512(password);
    await cluster.core.createNamespacedSecret({
      namespace,
      body: {
        metadata: { name: `${name}-import`, labels: { "rabbitmq.com/topology-operator": "true" } },
        stringData: { username, password: ignored, passwordHash },
      },
    });
    await createResource(userKind, namespace, name, {
      importCredentialsSecret: { name: `${name}-import` },
      ...ref,
    });
    await settle(topologyKind.user, deps, namespace, name);
    expect(condition(await getResource(userKind, namespace, name), "Ready")?.status).toBe("True");
    expect(await admin.get(apiPath("users", username), hashAnswer)).toMatchObject({
      password_hash: passwordHash,
    });
    await grantAll(username);
    expect(await canLogIn(username, password, vhost)).toBe(true);
    expect(await canLogIn(username, ignored, vhost)).toBe(false);

    const nameless = unique("user-nameless");
    await cluster.core.createNamespacedSecret({
      namespace,
      body: {
        metadata: { name: `${nameless}-import`, labels: { "rabbitmq.com/topology-operator": "true" } },
        stringData: { password },
      },
    });
    await createResource(userKind, namespace, nameless, {
      importCredentialsSecret: { name: `${nameless}-import` },
      ...ref,
    });
    expect((await settle(topologyKind.user, deps, namespace, nameless)).terminal).toBeDefined();
    expect(condition(await getResource(userKind, namespace, nameless), "Ready")).toMatchObject({
      status: "False",
      message: `Secret ${namespace}/${nameless}-import must hold the key username`,
    });
    expect(await admin.find(apiPath("users", nameless), userAnswer)).toBeUndefined();
  });

  it("generates credentials once, with a random username, owned by the User, and updates its tags", async () => {
    const name = unique("user-gen");
    await createResource(userKind, namespace, name, { tags: ["monitoring"], ...ref });
    await settle(topologyKind.user, deps, namespace, name);
    const user = await getResource(userKind, namespace, name);
    const secretName = generatedSecretName({ metadata: { name }, spec: ref });
    const read = async () => {
      const s = await cluster.core.readNamespacedSecret({ namespace, name: secretName });
      const value = (key: string) => Buffer.from(s.data?.[key] ?? "", "base64").toString();
      return { s, username: value("username"), password: value("password") };
    };
    const { s, username, password } = await read();
    brokerUsers.push(username);
    passwords.push(password);
    expect(username).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(password).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(user?.status).toMatchObject({ username, credentials: { name: secretName } });
    expect(s.metadata?.ownerReferences).toEqual([
      expect.objectContaining({ kind: "User", name, uid: user?.metadata.uid, controller: true }),
    ]);
    expect(s.metadata?.labels).toEqual({ "rabbitmq.com/topology-operator": "true" });
    await grantAll(username);
    expect(await canLogIn(username, password, vhost)).toBe(true);

    // A fresh process (empty memo) and a spec change: the same credentials, the new tags.
    await patchSpec(userKind, namespace, name, { tags: ["management"] });
    await settle(topologyKind.user, makeDeps(), namespace, name);
    expect(await read()).toMatchObject({ username, password });
    expect((await admin.get(apiPath("users", username), userAnswer)).tags).toEqual(["management"]);
    expect(await canLogIn(username, password, vhost)).toBe(true);
    expect((await getResource(userKind, namespace, name))?.status?.observedGeneration).toBe(2);
  });

  it("gives Users of one name in two namespaces two broker users", async () => {
    const other = await setUpNamespace("topo-users-twin");
    try {
      const name = unique("user-twin");
      const usernames: string[] = [];
      for (const ns of [namespace, other]) {
        await createResource(userKind, ns, name, ref);
        await settle(topologyKind.user, deps, ns, name);
        const username = (await getResource(userKind, ns, name))?.status?.username ?? "";
        brokerUsers.push(username);
        usernames.push(username);
        expect(await admin.find(apiPath("users", username), userAnswer)).toMatchObject({ name: username });
      }
      expect(new Set(usernames).size).toBe(2);
    } finally {
      await tearDownNamespace(other, [userKind]);
    }
  });
});

describe("Permission", () => {
  it("with userReference waits for the User's username, is owned by it, updated and deleted", async () => {
    const user = unique("user-ref");
    const name = unique("perm-ref");
    await createResource(userKind, namespace, user, ref);
    await createResource(permissionKind, namespace, name, {
      userReference: { name: user },
      vhost,
      permissions: { configure: "", write: ".*", read: ".*" },
      ...ref,
    });
    const waiting = await reconcileExternal(topologyKind.permission, deps, namespace, name);
    expect(waiting.requeueAfterMs).toBe(deps.settings.waitingRetryMs);
    expect(condition(await getResource(permissionKind, namespace, name), "Ready")).toMatchObject({
      status: "False",
      message: `User ${user} has no status.username yet`,
    });

    await settle(topologyKind.user, deps, namespace, user);
    const username = (await getResource(userKind, namespace, user))?.status?.username ?? "";
    brokerUsers.push(username);
    await settle(topologyKind.permission, deps, namespace, name);
    const permission = await getResource(permissionKind, namespace, name);
    expect(condition(permission, "Ready")).toMatchObject({ status: "True" });
    expect(permission?.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: "User", name: user, controller: true }),
    ]);
    expect(await admin.get(apiPath("permissions", vhost, username), permissionAnswer)).toMatchObject({
      configure: "",
      write: ".*",
      read: ".*",
    });

    await patchSpec(permissionKind, namespace, name, {
      permissions: { configure: "", write: "", read: "^r" },
    });
    await settle(topologyKind.permission, deps, namespace, name);
    expect(await admin.get(apiPath("permissions", vhost, username), permissionAnswer)).toMatchObject({
      write: "",
      read: "^r",
    });

    await deleteResource(permissionKind, namespace, name);
    await settle(topologyKind.permission, deps, namespace, name);
    expect(await getResource(permissionKind, namespace, name)).toBeUndefined();
    expect(await admin.find(apiPath("permissions", vhost, username), permissionAnswer)).toBeUndefined();
  });
});

describe("secrets", () => {
  it("no password appears in a status condition or a captured log line", async () => {
    expect(passwords.length).toBeGreaterThanOrEqual(4);
    for (const kind of [userKind, permissionKind]) {
      const list = await custom.listNamespacedCustomObject({
        group: kind.group,
        version: kind.version,
        plural: kind.plural,
        namespace,
      });
      const text = JSON.stringify(list);
      expect(text).toContain("Ready");
      for (const password of passwords) expect(text).not.toContain(password);
    }
    expect(logLinesHolding(passwords)).toEqual([]);
  });
});
