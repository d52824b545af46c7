// The managed bus's management API as the operator reaches it: the RabbitmqCluster's default-user Secret
// for the administrator and the management base URL (upstream's operator-connection-uri annotation, or
// the cluster's Service on its management port). The successor's hash check, the count of a user's
// connections and the removal of stray users ask it. The administrator's credentials stay inside the returned `get`; the reasons
// it gives name the cluster, status or error codes, never a credential.
import { rabbitmqClusterKind, RabbitmqClusterSchema, secretKind } from "../../api/index.ts";
import type { KubeObject } from "../../runtime/kube-rest.ts";
import type { Kube } from "../../runtime/kube.ts";
import { openFence, type WriteFence } from "../../runtime/lease-fence.ts";
import { defaultUserSecretKey, type ManagedBus } from "./bus-gates.ts";

/** Upstream's annotation naming a RabbitmqCluster's management URL where its Service does not resolve. */
const CONNECTION_URI = "rabbitmq.com/operator-connection-uri";
const serviceKind = {
  group: "",
  version: "v1",
  plural: "services",
  kind: "Service",
  namespaced: true,
} as const;

/** A request to the management API as the administrator: its response, or the error code when none came. */
export type ManagementGet = (
  path: string,
  timeoutMs: number,
  method?: "GET" | "DELETE",
) => Promise<{ ok: true; response: Response } | { ok: false; why: string }>;

/** The broker's management API, or why it cannot be asked (no credential in the reason). */
export type ManagementAccess = { ok: true; get: ManagementGet } | { ok: false; reason: string };

/**
 * Reads the bus's RabbitmqCluster, its default-user Secret and its management URL. `path` in `get` is
 * relative to the base URL (`api/users/x`), its segments already encoded. A DELETE first asks `fence`
 * (the Lease fence) and throws when it refuses.
 */
export async function managementApi(
  kube: Kube,
  bus: ManagedBus,
  domain: string,
  fence: WriteFence = openFence,
): Promise<ManagementAccess> {
  const rmq = bus.rabbitmqCluster;
  const parsed = RabbitmqClusterSchema.safeParse(await kube.get(rabbitmqClusterKind, rmq));
  if (!parsed.success) return refused(`RabbitmqCluster ${rmq.namespace}/${rmq.name} cannot be read`);
  const secretKey = defaultUserSecretKey(rmq, parsed.data);
  const secret = secretKey ? await kube.get(secretKind, secretKey) : undefined;
  const admin = secret ? decoded(secret) : {};
  const username = admin["username"];
  const password = admin["password"];
  if (!username || !password) {
    return refused(
      `the default-user Secret of RabbitmqCluster ${rmq.namespace}/${rmq.name} lacks the administrator`,
    );
  }
  const base = await managementUrl(kube, parsed.data, rmq, domain);
  if (!base) return refused(`RabbitmqCluster ${rmq.namespace}/${rmq.name} names no management endpoint`);
  const authorization = `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`;
  return {
    ok: true,
    async get(path, timeoutMs, method = "GET") {
      // Outside the try: a refusal is no answer of the broker's.
      if (method !== "GET") fence.check(`${method} ${path} on the broker`);
      try {
        const response = await fetch(new URL(path, withSlash(base)), {
          method,
          headers: { authorization },
          signal: AbortSignal.timeout(timeoutMs),
        });
        return { ok: true, response };
      } catch (error) {
        const code = (error as { cause?: { code?: unknown } }).cause?.code;
        const why = typeof code === "string" ? code : error instanceof Error ? error.name : "failed";
        return { ok: false, why };
      }
    },
  };
}

const refused = (reason: string): ManagementAccess => ({ ok: false, reason });

function decoded(secret: KubeObject): Record<string, string> {
  const data = (secret["data"] ?? {}) as Record<string, string>;
  return Object.fromEntries(
    Object.entries(data).map(([k, v]) => [k, Buffer.from(v, "base64").toString("utf8")]),
  );
}

/** The annotation's URL, or the cluster's Service on its management port (a managed bus runs no TLS). */
async function managementUrl(
  kube: Kube,
  cluster: { metadata: { annotations?: Record<string, string> | undefined }; status?: unknown },
  rmq: { namespace: string; name: string },
  domain: string,
): Promise<string | undefined> {
  const annotated = cluster.metadata.annotations?.[CONNECTION_URI];
  if (annotated) return annotated;
  const ref = (
    cluster.status as { defaultUser?: { serviceReference?: { name?: string; namespace?: string } } }
  )?.defaultUser?.serviceReference;
  const name = ref?.name ?? rmq.name;
  const namespace = ref?.namespace || rmq.namespace;
  const service = await kube.get(serviceKind, { namespace, name });
  if (!service) return undefined;
  const ports = (service["spec"] as { ports?: { name?: string; port: number }[] } | undefined)?.ports ?? [];
  const port = ports.find((p) => p.name === "management")?.port ?? 15672;
  return `http://${name}.${namespace}.svc${domain}:${port}`;
}

const withSlash = (url: string): string => (url.endsWith("/") ? url : `${url}/`);
