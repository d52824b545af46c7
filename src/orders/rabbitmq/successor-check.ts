// The check before a switch: does the broker accept the successor's credentials? By default it asks the
// management API the operator already reaches (`GET /api/users/{name}`) and compares the stored salted
// hash with the password from the successor's Secret, so no AMQP path from the operator to the broker's
// in-cluster address is needed. An AMQP login, or no check at all, are options. Reasons land in
// VhostReady's message: built from status codes and user names, never from a credential.
import { rabbitmqClusterKind, RabbitmqClusterSchema, secretKind } from "../../api/index.ts";
import { verifyPassword } from "../../rabbitmq/password.ts";
import type { KubeObject } from "../../runtime/kube-rest.ts";
import type { Kube } from "../../runtime/kube.ts";
import type { SwitchCheck } from "../core/generations.ts";
import type { SuccessorLogin } from "../core/kind.ts";
import { amqpLoginCheck } from "./broker-check.ts";
import { defaultUserSecretKey, type ManagedBus } from "./bus-gates.ts";

export const SUCCESSOR_CHECKS = ["hash", "amqp", "none"] as const;
export type SuccessorCheckMode = (typeof SUCCESSOR_CHECKS)[number];

export type BusSuccessorCheck = (
  management: Kube,
  bus: ManagedBus,
  login: SuccessorLogin,
  timeoutMs: number,
) => Promise<SwitchCheck>;

/** Upstream's annotation naming a RabbitmqCluster's management URL where its Service does not resolve. */
const CONNECTION_URI = "rabbitmq.com/operator-connection-uri";
const serviceKind = {
  group: "",
  version: "v1",
  plural: "services",
  kind: "Service",
  namespaced: true,
} as const;

export function successorCheck(mode: SuccessorCheckMode, messagingDomain: string): BusSuccessorCheck {
  if (mode === "none") return async () => ({ accepted: true });
  if (mode === "amqp") return (_kube, _bus, login, timeoutMs) => amqpLoginCheck(login, timeoutMs);
  return (kube, bus, login, timeoutMs) => hashCheck(kube, bus, login, timeoutMs, messagingDomain);
}

const refused = (reason: string): SwitchCheck => ({ accepted: false, reason });

async function hashCheck(
  kube: Kube,
  bus: ManagedBus,
  login: SuccessorLogin,
  timeoutMs: number,
  domain: string,
): Promise<SwitchCheck> {
  const rmq = bus.rabbitmqCluster;
  const parsed = RabbitmqClusterSchema.safeParse(await kube.get(rabbitmqClusterKind, rmq));
  if (!parsed.success) return refused(`RabbitmqCluster ${rmq.namespace}/${rmq.name} cannot be read`);
  const secretKey = defaultUserSecretKey(rmq, parsed.data);
  const secret = secretKey ? await kube.get(secretKind, secretKey) : undefined;
  const admin = secret ? decoded(secret) : {};
  if (!admin["username"] || !admin["password"]) {
    return refused(
      `the default-user Secret of RabbitmqCluster ${rmq.namespace}/${rmq.name} lacks the administrator`,
    );
  }
  const base = await managementUrl(kube, parsed.data, rmq, domain);
  if (!base) return refused(`RabbitmqCluster ${rmq.namespace}/${rmq.name} names no management endpoint`);
  const who = `user "${login.username}"`;
  let response: Response;
  try {
    response = await fetch(new URL(`api/users/${encodeURIComponent(login.username)}`, withSlash(base)), {
      headers: {
        authorization: `Basic ${Buffer.from(`${admin["username"]}:${admin["password"]}`).toString("base64")}`,
      },
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    const code = (error as { cause?: { code?: unknown } }).cause?.code;
    const why = typeof code === "string" ? code : error instanceof Error ? error.name : "failed";
    return refused(`the broker's management API cannot be reached to check ${who} (${why})`);
  }
  if (response.status === 404) {
    await response.arrayBuffer();
    return refused(`the broker holds no ${who}`);
  }
  if (!response.ok) {
    await response.arrayBuffer();
    return refused(`the broker's management API answered HTTP ${response.status} for ${who}`);
  }
  const user = (await response.json()) as { password_hash?: unknown; hashing_algorithm?: unknown };
  const hash = typeof user.password_hash === "string" ? user.password_hash : "";
  const algorithm = typeof user.hashing_algorithm === "string" ? user.hashing_algorithm : "";
  return verifyPassword(login.password, hash, algorithm)
    ? { accepted: true }
    : refused(`the broker holds another password for ${who}`);
}

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
