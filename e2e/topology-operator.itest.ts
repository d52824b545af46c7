// The built-in topology controller inside the running operator, on RabbitMQ 4.3 and 3.10: the watches
// bring each kind to the broker, a changed imported password reaches the broker through the
// labelled-Secret watch, a Permission waits for its User, a vhost removed behind the operator's back is
// repaired by the verification pass, condition transitions are recorded as events, and no password
// reaches the log or an event.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import * as k8s from "@kubernetes/client-node";
import amqp from "amqplib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createManagedBus, installCrds } from "../harness/world/managed-bus.ts";
import { localEnv } from "../harness/world/env.ts";
import { eventually, freshNamespace, testCluster } from "../harness/world/kube.ts";
import { majors, type LocalNode } from "../harness/world/local-brokers.ts";
import { OperatorProcess } from "../harness/operator/operator-process.ts";
import { removeTopologyObjects } from "./support/topology-objects.ts";

const env = localEnv();
const cluster = testCluster("management");
const custom = cluster.config.makeApiClient(k8s.CustomObjectsApi);
const eventsApi = cluster.config.makeApiClient(k8s.EventsV1Api);
const run = promisify(execFile);
const localenvScript = fileURLToPath(new URL("../scripts/localenv.sh", import.meta.url));
const localenv = (...args: string[]) =>
  run("bash", [localenvScript, ...args], { env: { ...process.env, LOCALENV_STATE: env.LOCALENV_STATE } });
const ref = { rabbitmqClusterReference: { name: "rabbitmq" } };
const kinds = {
  vhosts: "Vhost",
  users: "User",
  permissions: "Permission",
  queues: "Queue",
  exchanges: "Exchange",
  bindings: "Binding",
  policies: "Policy",
} as const;
type Plural = keyof typeof kinds;

/** The controller's life on one broker of the local environment, in a namespace of its own. */
function describeOn(node: LocalNode): void {
  const { broker } = node;
  const suffix = `${node.part.replace("rabbitmq", "r")}-${Date.now().toString(36)}`;
  const vhost = `vb-op-${suffix}`;
  const username = `vb-op-user-${suffix}`;
  const firstPassword = `first-${Math.random().toString(36).slice(2)}`;
  const secondPassword = `second-${Math.random().toString(36).slice(2)}`;

  let namespace = "";
  let operator: OperatorProcess | undefined;

  const admin = (path: string) =>
    fetch(new URL(`/api/${path}`, broker.managementUrl), {
      headers: {
        authorization: `Basic ${Buffer.from(`${broker.adminUsername}:${broker.adminPassword}`).toString("base64")}`,
      },
    });

  async function create(plural: Plural, name: string, spec: Record<string, unknown>): Promise<void> {
    await custom.createNamespacedCustomObject({
      group: "rabbitmq.com",
      version: "v1beta1",
      plural,
      namespace,
      body: {
        apiVersion: "rabbitmq.com/v1beta1",
        kind: kinds[plural],
        metadata: { name },
        spec: { ...spec, ...ref },
      },
    });
  }

  async function ready(plural: Plural, name: string): Promise<boolean | undefined> {
    const object = (await custom.getNamespacedCustomObject({
      group: "rabbitmq.com",
      version: "v1beta1",
      plural,
      namespace,
      name,
    })) as { status?: { conditions?: { type: string; status: string }[] } };
    return object.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") || undefined;
  }

  /** The events about one object, oldest first, as type and reason. */
  async function eventsAbout(kind: string, name: string): Promise<[string, string][]> {
    const { items } = await eventsApi.listNamespacedEvent({ namespace });
    return items
      .filter((e) => e.regarding?.kind === kind && e.regarding.name === name)
      .sort((a, b) => new Date(a.eventTime).getTime() - new Date(b.eventTime).getTime())
      .map((e) => [e.type ?? "", e.reason ?? ""]);
  }

  async function canLogIn(password: string): Promise<boolean> {
    try {
      const connection = await amqp.connect(
        `amqp://${encodeURIComponent(username)}:${encodeURIComponent(password)}@${broker.amqpHost}:${broker.amqpPort}/${encodeURIComponent(vhost)}`,
      );
      await connection.close();
      return true;
    } catch {
      return false;
    }
  }

  describe(`the built-in topology controller in the operator, RabbitMQ ${node.version}`, () => {
    beforeAll(async () => {
      await installCrds(cluster.config);
      namespace = await freshNamespace(cluster, "topo-op");
      await createManagedBus(cluster.config, namespace, broker);
      operator = await OperatorProcess.start({ args: ["--topology-verification-period=3s"] });
    });

    afterAll(async () => {
      // The operator takes its finalizers off while it still runs; then the namespace goes.
      await removeTopologyObjects(cluster, namespace, Object.keys(kinds) as Plural[], 30_000);
      await operator?.stop();
      await cluster.core.deleteNamespace({ name: namespace }).catch(() => undefined);
    });

    it("declares a vhost, an imported user and its permission, waiting for the user first", async () => {
      await cluster.core.createNamespacedSecret({
        namespace,
        body: {
          metadata: { name: "app-credentials", labels: { "rabbitmq.com/topology-operator": "true" } },
          stringData: { username, password: firstPassword },
        },
      });
      // The Permission comes first; it references a User that does not exist yet.
      await create("permissions", "app", {
        vhost,
        userReference: { name: "app" },
        permissions: { configure: ".*", write: ".*", read: ".*" },
      });
      await create("vhosts", "app", { name: vhost });
      await create("users", "app", { importCredentialsSecret: { name: "app-credentials" } });
      for (const plural of ["vhosts", "users", "permissions"] as const) {
        await eventually(`${plural}/app Ready`, () => ready(plural, "app"), 30_000);
      }
      expect(await canLogIn(firstPassword)).toBe(true);
    });

    it("declares a queue, an exchange, a binding and a policy", async () => {
      await create("exchanges", "events", { name: "events", vhost, type: "topic" });
      await create("queues", "work", { name: "work", vhost, type: "quorum", durable: true });
      await create("bindings", "work-events", {
        vhost,
        source: "events",
        destination: "work",
        destinationType: "queue",
        routingKey: "job.*",
      });
      await create("policies", "ttl", {
        name: "ttl",
        vhost,
        pattern: "^work$",
        applyTo: "queues",
        definition: { "message-ttl": 60000 },
      });
      for (const [plural, name] of [
        ["exchanges", "events"],
        ["queues", "work"],
        ["bindings", "work-events"],
        ["policies", "ttl"],
      ] as const) {
        await eventually(`${plural}/${name} Ready`, () => ready(plural, name), 30_000);
      }
      const bindings = (await (await admin(`bindings/${vhost}/e/events/q/work`)).json()) as {
        routing_key: string;
      }[];
      expect(bindings.map((b) => b.routing_key)).toEqual(["job.*"]);
      const queue = (await (await admin(`queues/${vhost}/work`)).json()) as { type: string };
      expect(queue.type).toBe("quorum");
    });

    it("sends a changed imported password to the broker at once, through the Secret watch", async () => {
      await cluster.core.patchNamespacedSecret(
        { namespace, name: "app-credentials", body: { stringData: { password: secondPassword } } },
        k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
      );
      await eventually(
        "the new password to log in",
        async () => (await canLogIn(secondPassword)) || undefined,
        20_000,
      );
      expect(await canLogIn(firstPassword)).toBe(false);
    });

    it("repairs a vhost deleted behind its back within a verification period", async () => {
      await run(node.rabbitmqctl, ["delete_vhost", vhost]);
      expect((await admin(`vhosts/${vhost}`)).status).toBe(404);
      await eventually(
        "the vhost to be declared again",
        async () => ((await admin(`vhosts/${vhost}`)).ok ? true : undefined),
        30_000,
      );
      // It stayed Ready through the repair and every verification pass: one event, from its first Ready.
      expect(await eventsAbout("Vhost", "app")).toEqual([["Normal", "SuccessfulCreateOrUpdate"]]);
    });

    it("reads Ready False while the broker is stopped, and True again once it is back, with no help", async () => {
      const stopped = `vb-op-stopped-${suffix}`;
      await localenv("stop", node.part);
      try {
        await create("vhosts", "while-stopped", { name: stopped });
        const message = await eventually(
          "Ready False while the broker is stopped",
          async () => {
            const object = (await custom.getNamespacedCustomObject({
              group: "rabbitmq.com",
              version: "v1beta1",
              plural: "vhosts",
              namespace,
              name: "while-stopped",
            })) as { status?: { conditions?: { type: string; status: string; message?: string }[] } };
            const condition = object.status?.conditions?.find((c) => c.type === "Ready");
            return condition?.status === "False" ? (condition.message ?? "") : undefined;
          },
          30_000,
        );
        expect(message).not.toContain(broker.adminPassword);
      } finally {
        // `up` starts what is not running: here, the broker alone.
        await localenv("up");
      }
      await eventually("Ready True after the broker is back", () => ready("vhosts", "while-stopped"), 90_000);
      expect((await admin(`vhosts/${stopped}`)).ok).toBe(true);
      // The outage is transient: the condition says so, no event does (seed 004); the recovery does.
      const events = await eventually("the recovery as an event", async () => {
        const found = await eventsAbout("Vhost", "while-stopped");
        return found.length >= 1 ? found : undefined;
      });
      expect(events).toEqual([["Normal", "SuccessfulCreateOrUpdate"]]);
    }, 150_000);

    it("never writes a password into the log or an event", async () => {
      const logs = operator?.logs() ?? "";
      expect(logs.length).toBeGreaterThan(0);
      const { items } = await eventsApi.listNamespacedEvent({ namespace });
      expect(items.length).toBeGreaterThan(0);
      const events = JSON.stringify(items);
      for (const secret of [firstPassword, secondPassword, broker.adminPassword, env.BAO_TOKEN]) {
        expect(logs).not.toContain(secret);
        expect(events).not.toContain(secret);
      }
    });
  });
}

for (const node of majors()) describeOn(node);
