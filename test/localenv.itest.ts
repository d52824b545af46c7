// Proof that the local environment is the real thing: each test exercises a behaviour that only a
// real kube-apiserver (with etcd and kube-controller-manager), RabbitMQ, OpenBao or MariaDB has.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import * as k8s from "@kubernetes/client-node";
import amqp from "amqplib";
import mysql from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localEnv } from "../harness/world/env.ts";
import { eventually, freshNamespace, installCrd, isApiError, testCluster } from "../harness/world/kube.ts";

const widgetCrd: k8s.V1CustomResourceDefinition = {
  metadata: { name: "widgets.localenv.vhost-broker.test" },
  spec: {
    group: "localenv.vhost-broker.test",
    names: { plural: "widgets", singular: "widget", kind: "Widget", listKind: "WidgetList" },
    scope: "Namespaced",
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: "object",
            properties: {
              spec: {
                type: "object",
                properties: { size: { type: "integer" }, colour: { type: "string" } },
                x_kubernetes_validations: [
                  { rule: "!has(self.size) || self.size <= 10", message: "size must be at most 10" },
                ],
              },
              status: { type: "object", properties: { phase: { type: "string" } } },
            },
          },
        },
      },
    ],
  },
};

function widget(namespace: string, name: string, spec: Record<string, unknown>) {
  return { apiVersion: "localenv.vhost-broker.test/v1", kind: "Widget", metadata: { namespace, name }, spec };
}

describe.each(["management", "target"] as const)("the %s cluster", (clusterName) => {
  const cluster = testCluster(clusterName);
  let ns = "";

  beforeAll(async () => {
    await installCrd(cluster, widgetCrd);
    ns = await freshNamespace(cluster, "localenv");
  });

  afterAll(async () => {
    await cluster.core.deleteNamespace({ name: ns }).catch(() => undefined);
  });

  it("serves the version it was built from", async () => {
    const version = await cluster.config.makeApiClient(k8s.VersionApi).getCode();
    expect(version.gitVersion).toMatch(/^v1\.3\d\.\d+$/);
  });

  it("refuses an object that breaks a CEL rule, with the rule's message", async () => {
    const refused = cluster.objects.create(widget(ns, "too-big", { size: 11 }));
    await expect(refused).rejects.toMatchObject({ code: 422 });
    await expect(refused).rejects.toThrow(/size must be at most 10/);
    await expect(cluster.objects.create(widget(ns, "fits", { size: 10 }))).resolves.toBeDefined();
  });

  it("makes two server-side-apply managers conflict unless one forces", async () => {
    const apply = (manager: string, colour: string, force: boolean) =>
      cluster.objects.patch(
        widget(ns, "shared", { colour }),
        undefined,
        undefined,
        manager,
        force,
        k8s.PatchStrategy.ServerSideApply,
      );
    await apply("first", "red", false);
    await expect(apply("second", "blue", false)).rejects.toMatchObject({ code: 409 });
    const forced = (await apply("second", "blue", true)) as unknown as { spec: { colour: string } };
    expect(forced.spec.colour).toBe("blue");
  });

  it("writes status through the /status subresource only", async () => {
    const custom = cluster.config.makeApiClient(k8s.CustomObjectsApi);
    const ref = { group: "localenv.vhost-broker.test", version: "v1", namespace: ns, plural: "widgets" };
    await custom.createNamespacedCustomObject({ ...ref, body: widget(ns, "with-status", { size: 1 }) });
    // A status in the main resource is dropped by the API server...
    const current = (await custom.getNamespacedCustomObject({ ...ref, name: "with-status" })) as {
      metadata: { resourceVersion: string };
    };
    const replaced = (await custom.replaceNamespacedCustomObject({
      ...ref,
      name: "with-status",
      body: {
        ...widget(ns, "with-status", { size: 2 }),
        metadata: { ...current.metadata, name: "with-status", namespace: ns },
        status: { phase: "ignored" },
      },
    })) as { status?: { phase?: string } };
    expect(replaced.status?.phase).toBeUndefined();
    // ...and accepted through /status.
    const patched = (await custom.patchNamespacedCustomObjectStatus(
      { ...ref, name: "with-status", body: { status: { phase: "Ready" } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    )) as { status?: { phase?: string } };
    expect(patched.status?.phase).toBe("Ready");
  });

  it("garbage-collects an object whose owner is deleted", async () => {
    const owner = await cluster.core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: "owner" } },
    });
    await cluster.core.createNamespacedConfigMap({
      namespace: ns,
      body: {
        metadata: {
          name: "dependent",
          ownerReferences: [
            { apiVersion: "v1", kind: "ConfigMap", name: "owner", uid: owner.metadata?.uid ?? "" },
          ],
        },
      },
    });
    await cluster.core.deleteNamespacedConfigMap({ namespace: ns, name: "owner" });
    await eventually("the dependent ConfigMap to be garbage-collected", async () => {
      try {
        await cluster.core.readNamespacedConfigMap({ namespace: ns, name: "dependent" });
        return undefined;
      } catch (error) {
        if (isApiError(error, 404)) return true;
        throw error;
      }
    });
  });

  it("finishes deleting a namespace with objects in it", async () => {
    const doomed = await freshNamespace(cluster, "doomed");
    await cluster.core.createNamespacedConfigMap({
      namespace: doomed,
      body: { metadata: { name: "content" } },
    });
    await cluster.objects.create(widget(doomed, "content", { size: 1 }));
    await cluster.core.deleteNamespace({ name: doomed });
    await eventually(`namespace ${doomed} to be gone`, async () => {
      try {
        await cluster.core.readNamespace({ name: doomed });
        return undefined;
      } catch (error) {
        if (isApiError(error, 404)) return true;
        throw error;
      }
    });
  });
});

describe("RabbitMQ", () => {
  const env = localEnv();
  const run = promisify(execFile);
  const auth = `Basic ${Buffer.from(`${env.RABBITMQ_ADMIN_USERNAME}:${env.RABBITMQ_ADMIN_PASSWORD}`).toString("base64")}`;
  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${env.RABBITMQ_MANAGEMENT_URL}/api/${path}`, {
      ...init,
      headers: { authorization: auth, "content-type": "application/json" },
    });

  it("creates a vhost through the management API, lets an AMQP client in, and deletes it", async () => {
    const vhost = `localenv-${Date.now()}`;
    const user = `${vhost}-user`;
    expect((await api(`vhosts/${encodeURIComponent(vhost)}`, { method: "PUT", body: "{}" })).status).toBe(
      201,
    );
    expect(
      (await api(`users/${user}`, { method: "PUT", body: JSON.stringify({ password: "s3cret", tags: "" }) }))
        .status,
    ).toBe(201);
    const grant = { configure: ".*", write: ".*", read: ".*" };
    expect(
      (await api(`permissions/${vhost}/${user}`, { method: "PUT", body: JSON.stringify(grant) })).status,
    ).toBe(201);

    const url = new URL(env.RABBITMQ_URL);
    const connection = await amqp.connect(`amqp://${user}:s3cret@${url.host}/${encodeURIComponent(vhost)}`);
    const channel = await connection.createChannel();
    const queue = await channel.assertQueue("probe", { durable: false });
    expect(queue.queue).toBe("probe");
    await connection.close();
    await expect(
      amqp.connect(`amqp://${user}:wrong@${url.host}/${encodeURIComponent(vhost)}`),
    ).rejects.toThrow(/ACCESS_REFUSED/);

    expect((await api(`vhosts/${vhost}`, { method: "DELETE" })).status).toBe(204);
    expect((await api(`vhosts/${vhost}`)).status).toBe(404);
    await api(`users/${user}`, { method: "DELETE" });
  });

  it("runs a second broker, a node of its own with its own administrator and AMQP port", async () => {
    const overview = async (managementUrl: string, username: string, password: string) => {
      const res = await fetch(`${managementUrl}/api/overview`, {
        headers: { authorization: `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}` },
      });
      expect(res.status).toBe(200);
      return (await res.json()) as { node: string; listeners: { protocol: string; port: number }[] };
    };
    const first = await overview(
      env.RABBITMQ_MANAGEMENT_URL,
      env.RABBITMQ_ADMIN_USERNAME,
      env.RABBITMQ_ADMIN_PASSWORD,
    );
    const second = await overview(
      env.RABBITMQ_2_MANAGEMENT_URL,
      env.RABBITMQ_2_ADMIN_USERNAME,
      env.RABBITMQ_2_ADMIN_PASSWORD,
    );
    expect(second.node).not.toBe(first.node);
    const amqpPort = (o: typeof first) => o.listeners.find((l) => l.protocol === "amqp")?.port;
    expect(amqpPort(second)).toBe(Number(new URL(env.RABBITMQ_2_URL).port));
    expect(amqpPort(second)).not.toBe(amqpPort(first));
    const connection = await amqp.connect(env.RABBITMQ_2_URL);
    await connection.close();
  });

  it("runs RabbitMQ 4.3 as every test's broker, 3.10 as the second and 4.0 as the third, each on its own node", async () => {
    const nodes = [
      ["rabbitmq", env.RABBITMQ_MANAGEMENT_URL, env.RABBITMQ_ADMIN_PASSWORD, env.RABBITMQ_VERSION, /^4\.3\./],
      [
        "rabbitmq-2",
        env.RABBITMQ_2_MANAGEMENT_URL,
        env.RABBITMQ_2_ADMIN_PASSWORD,
        env.RABBITMQ_2_VERSION,
        /^3\.10\./,
      ],
      [
        "rabbitmq-40",
        env.RABBITMQ_40_MANAGEMENT_URL,
        env.RABBITMQ_40_ADMIN_PASSWORD,
        env.RABBITMQ_40_VERSION,
        /^4\.0\./,
      ],
    ] as const;
    const seen = new Set<string>();
    for (const [part, managementUrl, password, exported, version] of nodes) {
      const res = await fetch(`${managementUrl}/api/overview`, {
        headers: {
          authorization: `Basic ${Buffer.from(`${env.RABBITMQ_ADMIN_USERNAME}:${password}`).toString("base64")}`,
        },
      });
      const overview = (await res.json()) as { node: string; rabbitmq_version: string };
      expect(overview.rabbitmq_version, part).toMatch(version);
      expect(exported, part).toBe(overview.rabbitmq_version);
      seen.add(overview.node);
    }
    expect(seen.size).toBe(3);
    const connection = await amqp.connect(env.RABBITMQ_40_URL);
    await connection.close();
  });

  it("keeps a '$' in a rabbitmqctl argument on the 4.3 node (Debian sid's own wrapper would expand it)", async () => {
    const user = `localenv-$HOME-${Date.now()}`;
    await run(env.RABBITMQCTL, ["add_user", user, "s3cret"]);
    try {
      expect((await api(`users/${encodeURIComponent(user)}`)).status).toBe(200);
    } finally {
      await api(`users/${encodeURIComponent(user)}`, { method: "DELETE" });
    }
  });
});

describe("OpenBao", () => {
  const env = localEnv();
  const bao = (path: string, init: RequestInit = {}) =>
    fetch(`${env.BAO_ADDR}/v1/${path}`, { ...init, headers: { "X-Vault-Token": env.BAO_TOKEN } });

  it("writes a KV v2 secret on the kv-v2 mount and reads it back with its version", async () => {
    const path = `localenv/probe-${Date.now()}`;
    const write = await bao(`kv-v2/data/${path}`, {
      method: "POST",
      body: JSON.stringify({ data: { username: "u", password: "p" } }),
    });
    expect(write.status).toBe(200);
    const written = (await write.json()) as { data: { version: number } };
    const read = (await (await bao(`kv-v2/data/${path}`)).json()) as {
      data: { data: Record<string, string>; metadata: { version: number } };
    };
    expect(read.data.data).toEqual({ username: "u", password: "p" });
    expect(read.data.metadata.version).toBe(written.data.version);
    expect((await bao(`kv-v2/metadata/${path}`, { method: "DELETE" })).status).toBe(204);
    expect((await bao(`kv-v2/data/${path}`)).status).toBe(404);
  });
});

describe("MariaDB", () => {
  const env = localEnv();
  const run = promisify(execFile);

  it("lets the administrator create an account through the mariadb command, which then logs in over TCP", async () => {
    const user = `localenv_${Date.now()}`;
    const { stdout } = await run(env.MARIADB, [
      "-N",
      "-e",
      `CREATE USER '${user}'@'%' IDENTIFIED BY 's3cret'; SELECT CURRENT_USER()`,
    ]);
    expect(stdout.trim()).toBe(`${env.MARIADB_ADMIN_USERNAME}@%`);
    try {
      const connection = await mysql.createConnection({
        host: env.MARIADB_HOST,
        port: env.MARIADB_PORT,
        user,
        password: "s3cret",
      });
      const [rows] = await connection.query("SELECT CURRENT_USER() AS me");
      expect(rows).toEqual([{ me: `${user}@%` }]);
      await connection.end();
      await expect(
        mysql.createConnection({ host: env.MARIADB_HOST, port: env.MARIADB_PORT, user, password: "wrong" }),
      ).rejects.toThrow(/Access denied/);
    } finally {
      await run(env.MARIADB, ["-e", `DROP USER '${user}'@'%'`]);
    }
  });

  it("offers TLS with a certificate for 127.0.0.1 from its CA, and takes its client certificate; plain logins go on", async () => {
    const cipher = async (ssl?: { ca: string; cert: string; key: string }) => {
      const connection = await mysql.createConnection({
        host: env.MARIADB_HOST,
        port: env.MARIADB_PORT,
        user: env.MARIADB_ADMIN_USERNAME,
        password: env.MARIADB_ADMIN_PASSWORD,
        ...(ssl ? { ssl: { ...ssl, rejectUnauthorized: true } } : {}),
      });
      try {
        const [rows] = await connection.query("SHOW SESSION STATUS LIKE 'Ssl_cipher'");
        return (rows as { Value: string }[])[0]?.Value;
      } finally {
        await connection.end();
      }
    };
    const read = (path: string) => readFileSync(path, "utf8");
    const tls = {
      ca: read(env.MARIADB_CA_FILE),
      cert: read(env.MARIADB_CLIENT_CERT_FILE),
      key: read(env.MARIADB_CLIENT_KEY_FILE),
    };
    expect(await cipher(tls)).toMatch(/^TLS_/);
    expect(await cipher()).toBe("");
  });
});
