// Test-only stand-in for a topology operator: it serves the order's Vhost, User and Permission CRs on the
// real local RabbitMQ through its management API, writes their Ready status with observedGeneration, and,
// like upstream, holds a finalizer on each CR until it has removed the broker object (a Vhost under
// `retain` is left on the broker). The built-in topology controller (src/topology) replaces it once the
// runtime wires that controller in; the order reconciler cannot tell the two apart, since they meet only
// through these CRs.
import * as k8s from "@kubernetes/client-node";
import { localEnv } from "./env.ts";
import type { TestCluster } from "./kube.ts";

interface Cr {
  metadata: {
    name: string;
    namespace: string;
    generation?: number;
    deletionTimestamp?: unknown;
    finalizers?: string[];
    resourceVersion?: string;
  };
  spec: Record<string, unknown> & {
    name?: string;
    deletionPolicy?: string;
    importCredentialsSecret?: { name: string };
    vhost?: string;
    user?: string;
    permissions?: { configure?: string; write?: string; read?: string };
  };
  status?: { observedGeneration?: number; conditions?: { type: string; status: string }[] };
}

const kinds = [
  { plural: "vhosts", kind: "Vhost" },
  { plural: "users", kind: "User" },
  { plural: "permissions", kind: "Permission" },
] as const;

type Plural = (typeof kinds)[number]["plural"];

export class TopologyStandIn {
  private readonly custom: k8s.CustomObjectsApi;
  private readonly core: k8s.CoreV1Api;
  private readonly namespace: string;
  /** Broker users this stand-in reports Ready without declaring them: a faulty topology operator. */
  readonly phantomUsers = new Set<string>();

  constructor(cluster: TestCluster, namespace: string) {
    this.namespace = namespace;
    this.custom = cluster.config.makeApiClient(k8s.CustomObjectsApi);
    this.core = cluster.core;
  }

  /** One round over every Vhost, User and Permission in the namespace. */
  async step(): Promise<void> {
    for (const { plural } of kinds) {
      const list = (await this.custom.listNamespacedCustomObject({
        group: "rabbitmq.com",
        version: "v1beta1",
        plural,
        namespace: this.namespace,
      })) as { items: Cr[] };
      for (const cr of list.items) await this.serve(plural, cr);
    }
  }

  private async serve(plural: Plural, cr: Cr): Promise<void> {
    const finalizer = `deletion.finalizers.${plural}.rabbitmq.com`;
    if (cr.metadata.deletionTimestamp) {
      if (!(cr.metadata.finalizers ?? []).includes(finalizer)) return;
      await this.removeFromBroker(plural, cr);
      await this.setFinalizers(
        plural,
        cr,
        (cr.metadata.finalizers ?? []).filter((f) => f !== finalizer),
      );
      return;
    }
    if (!(cr.metadata.finalizers ?? []).includes(finalizer)) {
      await this.setFinalizers(plural, cr, [...(cr.metadata.finalizers ?? []), finalizer]);
    }
    const caughtUp =
      (cr.status?.observedGeneration ?? 0) >= (cr.metadata.generation ?? 0) &&
      cr.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True");
    if (caughtUp) return;
    const declared = await this.declare(plural, cr);
    if (!declared.ok) return; // looked at again next round (a Permission before its user, say)
    await this.custom.patchNamespacedCustomObjectStatus(
      {
        group: "rabbitmq.com",
        version: "v1beta1",
        plural,
        namespace: cr.metadata.namespace,
        name: cr.metadata.name,
        body: {
          status: {
            observedGeneration: cr.metadata.generation,
            conditions: [
              {
                type: "Ready",
                status: "True",
                reason: "SuccessfulCreateOrUpdate",
                lastTransitionTime: new Date().toISOString(),
              },
            ],
            ...(declared.username ? { username: declared.username } : {}),
          },
        },
      },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
  }

  private async declare(plural: Plural, cr: Cr): Promise<{ ok: boolean; username?: string }> {
    if (plural === "vhosts") return { ok: await broker("PUT", `/api/vhosts/${enc(cr.spec.name ?? "")}`, {}) };
    if (plural === "users") {
      const secret = await this.core.readNamespacedSecret({
        namespace: cr.metadata.namespace,
        name: cr.spec.importCredentialsSecret?.name ?? "",
      });
      const username = decode(secret.data?.["username"]);
      const password = decode(secret.data?.["password"]);
      if (this.phantomUsers.has(username)) return { ok: true, username };
      return { ok: await broker("PUT", `/api/users/${enc(username)}`, { password, tags: "" }), username };
    }
    if (this.phantomUsers.has(cr.spec.user ?? "")) return { ok: true };
    const path = `/api/permissions/${enc(cr.spec.vhost ?? "")}/${enc(cr.spec.user ?? "")}`;
    return { ok: await broker("PUT", path, cr.spec.permissions ?? {}) };
  }

  private async removeFromBroker(plural: Plural, cr: Cr): Promise<void> {
    if (plural === "vhosts") {
      if (cr.spec.deletionPolicy !== "retain")
        await broker("DELETE", `/api/vhosts/${enc(cr.spec.name ?? "")}`);
    } else if (plural === "users") {
      const secret = await this.core
        .readNamespacedSecret({
          namespace: cr.metadata.namespace,
          name: cr.spec.importCredentialsSecret?.name ?? "",
        })
        .catch(() => undefined);
      const username = decode(secret?.data?.["username"]) || cr.metadata.name;
      await broker("DELETE", `/api/users/${enc(username)}`);
    } else {
      await broker("DELETE", `/api/permissions/${enc(cr.spec.vhost ?? "")}/${enc(cr.spec.user ?? "")}`);
    }
  }

  private async setFinalizers(plural: Plural, cr: Cr, finalizers: string[]): Promise<void> {
    await this.custom
      .patchNamespacedCustomObject(
        {
          group: "rabbitmq.com",
          version: "v1beta1",
          plural,
          namespace: cr.metadata.namespace,
          name: cr.metadata.name,
          body: { metadata: { finalizers, resourceVersion: cr.metadata.resourceVersion } },
        },
        k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
      )
      .catch(() => undefined); // a conflict or a CR already gone: next round
  }
}

const enc = encodeURIComponent;
const decode = (v: string | undefined) => (v ? Buffer.from(v, "base64").toString("utf8") : "");

/** A call to the local broker's management API as its administrator; true on 2xx (or 404 for a delete). */
export async function broker(method: string, path: string, body?: unknown): Promise<boolean> {
  const env = localEnv();
  const auth = Buffer.from(`${env.RABBITMQ_ADMIN_USERNAME}:${env.RABBITMQ_ADMIN_PASSWORD}`).toString(
    "base64",
  );
  const res = await fetch(new URL(path, env.RABBITMQ_MANAGEMENT_URL), {
    method,
    headers: { authorization: `Basic ${auth}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  await res.arrayBuffer();
  return res.ok || (method === "DELETE" && res.status === 404);
}

/** GET from the management API as the administrator; undefined on 404. */
export async function brokerGet(path: string): Promise<unknown> {
  const env = localEnv();
  const auth = Buffer.from(`${env.RABBITMQ_ADMIN_USERNAME}:${env.RABBITMQ_ADMIN_PASSWORD}`).toString(
    "base64",
  );
  const res = await fetch(new URL(path, env.RABBITMQ_MANAGEMENT_URL), {
    headers: { authorization: `Basic ${auth}` },
  });
  if (res.status === 404) {
    await res.arrayBuffer();
    return undefined;
  }
  if (!res.ok) throw new Error(`GET ${path}: HTTP ${res.status}`);
  return res.json();
}
