// order-quota (validating, custom group): at most N orders of each kind (RabbitMQVhost, MariaDBDatabase)
// per namespace. N is the namespace's annotation gatekeeper.c5c3.io/order-quota, else
// VHOST_BROKER_ORDER_QUOTA, else no limit. Only a new order is refused: one that was admitted already
// exists and is never refused, also after the limit is lowered. Admitted means this plugin let it in (in
// this process), or its status carries its kind's resource condition (VhostReady, DatabaseReady) written
// by an admitted pass (any reason but GatekeeperRejected). The status is the evidence because a tenant
// cannot write it: a tenant can set the teardown finalizer at creation, so the finalizer says nothing.
// On a target cluster, whose chart grants no Namespace read, a namespace the operator may not read
// counts with the setting.
import { isApiStatus, type KubeObject } from "../../runtime/port/kube-rest.ts";
import { mariaDBDatabaseKind, rabbitMQVhostKind, type KindRef } from "../../api/index.ts";
import { GATEKEEPER_API_VERSION, type EntryContext, type GatekeeperPlugin } from "../api.ts";
import { GATEKEEPER_REJECTED } from "../gatekeeper.ts";
import type { Kube } from "../../runtime/port/kube.ts";

export const QUOTA_ANNOTATION = "gatekeeper.c5c3.io/order-quota";
const namespaceKind = {
  group: "",
  version: "v1",
  kind: "Namespace",
  plural: "namespaces",
  namespaced: false,
};

function limitText(text: string, where: string): number {
  if (!/^\d+$/.test(text)) throw new Error(`${where} "${text}" is not a whole number`);
  return Number(text);
}

interface Admissible {
  readonly metadata?: { readonly uid?: string | undefined } | undefined;
  readonly status?: unknown;
}

/**
 * Whether an order was let in before: an admitted pass wrote its resource condition (`evidence`:
 * VhostReady, DatabaseReady), or this process admitted it.
 */
export function admittedBefore(
  order: Admissible,
  admitted: ReadonlySet<string>,
  evidence = "VhostReady",
): boolean {
  if (admitted.has(order.metadata?.uid ?? "")) return true;
  const conditions = (order.status as { conditions?: { type?: string; reason?: string }[] } | undefined)
    ?.conditions;
  return (conditions ?? []).some((c) => c.type === evidence && c.reason !== GATEKEEPER_REJECTED);
}

/** Undefined when the namespace may hold any number of orders. */
async function limitOf(
  kube: Kube,
  cluster: string,
  namespace: string,
  fallback: number | undefined,
): Promise<number | undefined> {
  let ns: KubeObject | undefined;
  try {
    ns = await kube.get(namespaceKind, { namespace: "", name: namespace }, { live: true });
  } catch (error) {
    // The chart grants the read on the management cluster only: a refusal there is a fault.
    if (cluster !== "" && isApiStatus(error, 403)) return fallback;
    throw error;
  }
  const text = ns?.metadata?.annotations?.[QUOTA_ANNOTATION];
  return text === undefined ? fallback : limitText(text, `the annotation ${QUOTA_ANNOTATION}`);
}

let fallback: number | undefined;

/** One kind's count: the orders of that kind this process admitted (uid → namespace), until their status shows. */
function quota(kind: KindRef, evidence: string) {
  const admitted = new Map<string, string>();
  return async (context: EntryContext, order: Admissible & { metadata: { namespace?: string } }) => {
    const uids = new Set(admitted.keys());
    if (context.teardown || admittedBefore(order, uids, evidence)) return;
    const namespace = order.metadata.namespace ?? "";
    const limit = await limitOf(context.kube, context.cluster, namespace, fallback);
    if (limit === undefined) return;
    const orders = await context.kube.list(kind, namespace, "");
    const present = new Set(orders.map((o) => o.metadata?.uid ?? ""));
    for (const [uid, ns] of admitted) if (ns === namespace && !present.has(uid)) admitted.delete(uid);
    // Decided and recorded without an await in between: concurrent passes cannot both take the last place.
    const taken = orders.filter(
      (o) => o.metadata?.uid !== order.metadata?.uid && admittedBefore(o, new Set(admitted.keys()), evidence),
    ).length;
    if (taken >= limit) {
      throw new Error(
        `namespace ${namespace} may hold ${limit} ${kind.kind} orders and holds ${taken}: this new order is not provisioned until one is deleted or the quota (annotation ${QUOTA_ANNOTATION}) is raised`,
      );
    }
    admitted.set(order.metadata?.uid ?? "", namespace);
  };
}

const plugin: GatekeeperPlugin = {
  apiVersion: GATEKEEPER_API_VERSION,
  name: "order-quota",
  configure(context) {
    const text = context.env["VHOST_BROKER_ORDER_QUOTA"];
    fallback = text === undefined || text === "" ? undefined : limitText(text, "VHOST_BROKER_ORDER_QUOTA");
  },
  validating: {
    RabbitMQVhost: { entry: quota(rabbitMQVhostKind, "VhostReady") },
    MariaDBDatabase: { entry: quota(mariaDBDatabaseKind, "DatabaseReady") },
  },
};

export default plugin;
