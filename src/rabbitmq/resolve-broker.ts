// Which broker a topology resource talks to, from its rabbitmqClusterReference, decided the way the
// upstream Messaging Topology Operator decides it. The decision is pure: the caller looks the
// RabbitmqCluster, Secrets and Service up (BrokerLookup) and acts on the outcome.
import { TOPOLOGY_SECRET_LABEL } from "../api/contracts.ts";
import type { ManagementConnection } from "./client.ts";
import { asPathPrefix, managementPathPrefix } from "./additional-config.ts";

export const allowedNamespacesAnnotation = "rabbitmq.com/topology-allowed-namespaces";
export const connectionUriAnnotation = "rabbitmq.com/operator-connection-uri";

export interface ClusterReference {
  name?: string | undefined;
  namespace?: string | undefined;
  connectionSecret?: { name: string } | undefined;
}

export interface LookedUpObject {
  metadata: { annotations?: Record<string, string> | undefined; labels?: Record<string, string> | undefined };
}
export interface LookedUpSecret extends LookedUpObject {
  /** Decoded values of the Secret's data. */
  values: Record<string, string>;
}
export interface LookedUpCluster extends LookedUpObject {
  spec?:
    | {
        replicas?: number | undefined;
        /** The broker's extra configuration (rabbitmq.conf lines): management.path_prefix is read. */
        rabbitmq?: { additionalConfig?: string | undefined } | undefined;
      }
    | undefined;
  status?:
    | {
        binding?: { name?: string | undefined } | undefined;
        defaultUser?:
          | { serviceReference?: { name?: string | undefined; namespace?: string | undefined } | undefined }
          | undefined;
      }
    | undefined;
}
export interface LookedUpService extends LookedUpObject {
  ports: { name?: string | undefined; port: number }[];
}

/** Reads the objects a reference points at; undefined when one does not exist. */
export interface BrokerLookup {
  cluster(namespace: string, name: string): Promise<LookedUpCluster | undefined>;
  secret(namespace: string, name: string): Promise<LookedUpSecret | undefined>;
  service(namespace: string, name: string): Promise<LookedUpService | undefined>;
}

export interface ResolveSettings {
  /** Appended to `<service>.<namespace>.svc` (upstream's MESSAGING_DOMAIN_NAME), e.g. ".cluster.local". */
  domain: string;
  /** PEM bundle trusted for https brokers. */
  ca?: string | undefined;
}

/**
 * - ready: talk to `connection`.
 * - gone: the RabbitmqCluster does not exist (not found, or its kind is not served), so no broker is
 *   left to hold the object: a deletion releases its finalizer without calling one, as upstream's does.
 * - waiting: the broker cannot be used now, but may still hold the object (a user with a working
 *   password): the RabbitmqCluster scaled to zero, its default-user Secret or Service missing (with
 *   the connection-uri annotation the Service is not looked up), no service reference in its status
 *   yet; a connection Secret missing or incomplete. A deletion keeps its finalizer until it can be used
 *   (upstream lets go of a cluster scaled to zero or missing its Secret or Service, and the broker
 *   keeps the object).
 * - refused: the reference is not allowed (cross-namespace without consent on the RabbitmqCluster or
 *   the connection Secret, unlabelled Secret).
 */
export type BrokerResolution =
  | { outcome: "ready"; connection: ManagementConnection; key: string }
  | { outcome: "gone" | "waiting" | "refused"; reason: string };

/**
 * `unlabelledSecret`: a connection Secret without the label is used rather than refused (the teardown
 * of an object that was declared through it: the label bounds the operator's cache, not its reach).
 */
export async function resolveBroker(
  ref: ClusterReference,
  resourceNamespace: string,
  lookup: BrokerLookup,
  settings: ResolveSettings,
  options: { unlabelledSecret?: boolean } = {},
): Promise<BrokerResolution> {
  if (ref.connectionSecret) {
    const namespace = ref.namespace || resourceNamespace;
    const secret = { name: ref.connectionSecret.name, namespace, unlabelled: options.unlabelledSecret };
    return fromConnectionSecret(secret, resourceNamespace, lookup, settings);
  }
  if (!ref.name) {
    return {
      outcome: "refused",
      reason: "rabbitmqClusterReference names neither a cluster nor a connectionSecret",
    };
  }
  return fromCluster(ref.name, ref.namespace || resourceNamespace, resourceNamespace, lookup, settings);
}

async function fromConnectionSecret(
  { name, namespace, unlabelled }: { name: string; namespace: string; unlabelled?: boolean | undefined },
  resourceNamespace: string,
  lookup: BrokerLookup,
  settings: ResolveSettings,
): Promise<BrokerResolution> {
  const where = `connection Secret ${namespace}/${name}`;
  const secret = await lookup.secret(namespace, name);
  if (!secret) return { outcome: "waiting", reason: `${where} not found` };
  const refused = withoutConsent(secret, where, namespace, resourceNamespace);
  if (refused) return refused;
  if (!unlabelled && secret.metadata.labels?.[TOPOLOGY_SECRET_LABEL] !== "true") {
    return { outcome: "refused", reason: `${where} must carry the label ${TOPOLOGY_SECRET_LABEL}: "true"` };
  }
  const { uri, username, password } = secret.values;
  if (!uri || !username || !password) {
    return { outcome: "waiting", reason: `${where} must hold the keys uri, username and password` };
  }
  return ready(uri, where, username, password, settings);
}

async function fromCluster(
  name: string,
  namespace: string,
  resourceNamespace: string,
  lookup: BrokerLookup,
  settings: ResolveSettings,
): Promise<BrokerResolution> {
  const where = `RabbitmqCluster ${namespace}/${name}`;
  const cluster = await lookup.cluster(namespace, name);
  if (!cluster) return { outcome: "gone", reason: `${where} not found` };
  const refused = withoutConsent(cluster, where, namespace, resourceNamespace);
  if (refused) return refused;
  if (cluster.spec?.replicas === 0) return { outcome: "waiting", reason: `${where} is scaled to zero` };
  const serviceRef = cluster.status?.defaultUser?.serviceReference;
  const bindingName = cluster.status?.binding?.name;
  if (!serviceRef?.name || !bindingName) {
    return { outcome: "waiting", reason: `${where} has no service reference or binding in its status yet` };
  }
  const secret = await lookup.secret(namespace, bindingName);
  if (!secret)
    return { outcome: "waiting", reason: `${where}: Secret ${namespace}/${bindingName} not found` };
  const { username, password } = secret.values;
  if (!username || !password) {
    return { outcome: "waiting", reason: `${where}: Secret ${bindingName} has no username or password` };
  }
  // The annotation names a broker reached some other way: its Service is not needed then.
  const override = cluster.metadata.annotations?.[connectionUriAnnotation];
  if (override)
    return ready(override, `${where}: annotation ${connectionUriAnnotation}`, username, password, settings);
  const serviceNamespace = serviceRef.namespace || namespace;
  const service = await lookup.service(serviceNamespace, serviceRef.name);
  if (!service)
    return {
      outcome: "waiting",
      reason: `${where}: Service ${serviceNamespace}/${serviceRef.name} not found`,
    };
  const tls = service.ports.find((p) => p.name === "management-tls");
  const plain = service.ports.find((p) => p.name === "management");
  const port = tls ?? plain;
  if (!port)
    return { outcome: "waiting", reason: `${where}: Service ${serviceRef.name} has no management port` };
  const scheme = tls ? "https" : "http";
  // As upstream: the prefix applies to the URL built from the Service, not to the annotation's.
  const prefix = asPathPrefix(managementPathPrefix(cluster.spec?.rabbitmq?.additionalConfig));
  return ready(
    `${scheme}://${serviceRef.name}.${serviceNamespace}.svc${settings.domain}:${port.port}${prefix}`,
    where,
    username,
    password,
    settings,
  );
}

function ready(
  uri: string,
  where: string,
  username: string,
  password: string,
  settings: ResolveSettings,
): BrokerResolution {
  const url = managementBaseUrl(uri);
  // The reasons name where the URL comes from, never the URL: it may carry a password.
  if (!url.ok) return { outcome: "refused", reason: `${where}: the management URL ${url.why}` };
  // The key identifies a broker login without its password, for pools and the "served" log.
  return {
    outcome: "ready",
    connection: { url: url.value, username, password, ca: settings.ca },
    key: `${username}@${url.value}`,
  };
}

/**
 * A management base URL as upstream takes it: http without a scheme, https turns TLS on. Userinfo in
 * it is dropped, as upstream's client ignores it (it logs in with the username and password keys),
 * so no credential is kept in the URL, its pool key or a log line.
 */
export function managementBaseUrl(uri: string): { ok: true; value: string } | { ok: false; why: string } {
  const trimmed = uri.trim();
  const text = /^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) ? trimmed : `http://${trimmed}`;
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    return { ok: false, why: "is not a valid URL" };
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    return { ok: false, why: `must be http or https, not ${parsed.protocol.slice(0, 16)}` };
  }
  // Textually, so that the URL reads as written (a default port stays); the last "@" of the authority ends the userinfo.
  const withoutUserinfo = text.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, "$1");
  return { ok: true, value: withoutUserinfo.replace(/\/+$/, "") };
}

/** Refused when `target` lives in another namespace than the resource and its annotation does not allow it. */
function withoutConsent(
  target: LookedUpObject,
  where: string,
  namespace: string,
  resourceNamespace: string,
): BrokerResolution | undefined {
  if (namespace === resourceNamespace) return undefined;
  const allowed = (target.metadata.annotations?.[allowedNamespacesAnnotation] ?? "")
    .split(",")
    .map((s) => s.trim())
    .some((s) => s === "*" || s === resourceNamespace);
  if (allowed) return undefined;
  return {
    outcome: "refused",
    reason: `${where} does not allow topology resources from namespace ${resourceNamespace} (annotation ${allowedNamespacesAnnotation})`,
  };
}
