// order-quota (validating, custom group): at most N orders of each kind (RabbitMQVhost, MariaDBDatabase)
// per namespace. N is the namespace's annotation gatekeeper.c5c3.io/order-quota, else
// VHOST_BROKER_ORDER_QUOTA, else no limit. Only a new order is refused: one that was admitted already
// exists and is never refused, also after the limit is lowered. Admitted means this plugin let it in (in
// this process), or its container child (the Vhost CR, the Database CR) exists on the management cluster
// naming it: evidence only the operator writes. Neither the order's status (a tenant administering a
// target cluster writes it) nor its teardown finalizer (a tenant can set it at creation) says anything.
// On a target cluster, whose chart grants no Namespace read, a namespace the operator may not read
// counts with the setting.
import { isApiStatus, type KubeObject } from "../../runtime/port/kube-rest.ts";
import {
  MARIADBDATABASE_CHILD_PREFIX,
  orderChildKeys,
  RABBITMQVHOST_CHILD_PREFIX,
} from "../../api/contracts.ts";
import {
  mariaDBDatabaseKind,
  rabbitMQVhostKind,
  sqlDatabaseKind,
  vhostKind,
  type KindRef,
} from "../../api/index.ts";
import { GATEKEEPER_API_VERSION, type EntryContext, type GatekeeperPlugin } from "../api.ts";
import { isNotServed, type Kube } from "../../runtime/port/kube.ts";

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
  readonly metadata?: { readonly uid?: string | undefined; readonly name?: string | undefined } | undefined;
}

type ChildKeys = ReturnType<typeof orderChildKeys>;

/** The orders of one namespace whose container child exists: by the uid it records, or by name where it records none. */
export interface Evidence {
  uids: ReadonlySet<string>;
  /** Orders whose child was made before children recorded the order's uid. */
  unstamped: ReadonlySet<string>;
}

/**
 * The label selector of the container children of every order of `namespace` on `cluster`. Its first
 * term (the name label exists) is the orders' own watch, so that the caches answer it.
 */
export function childSelector(keys: ChildKeys, cluster: string, namespace: string): string {
  return `${keys.name},${keys.namespace}=${namespace},${keys.cluster}=${cluster}`;
}

export function evidenceOf(children: readonly KubeObject[], keys: ChildKeys): Evidence {
  const uids = new Set<string>();
  const unstamped = new Set<string>();
  for (const child of children) {
    const uid = child.metadata?.annotations?.[keys.uid];
    if (uid !== undefined) uids.add(uid);
    else unstamped.add(child.metadata?.labels?.[keys.name] ?? "");
  }
  return { uids, unstamped };
}

/** Whether an order was let in before: this process admitted it, or its container child exists. */
export function admittedBefore(
  order: Admissible,
  admitted: ReadonlySet<string>,
  evidence: Evidence,
): boolean {
  const uid = order.metadata?.uid ?? "";
  return admitted.has(uid) || evidence.uids.has(uid) || evidence.unstamped.has(order.metadata?.name ?? "");
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

/** The container children a selector finds; none where the management cluster does not serve their kind. */
async function childrenOf(management: Kube, container: KindRef, selector: string): Promise<KubeObject[]> {
  try {
    return await management.list(container, "", selector);
  } catch (error) {
    if (isNotServed(error)) return [];
    throw error;
  }
}

let fallback: number | undefined;

/**
 * One kind's count. `admitted` holds the orders of that kind this process admitted or found admitted
 * (uid → cluster/namespace), so that an existing order's passes cost one read of the evidence per process.
 */
function quota(kind: KindRef, container: KindRef, prefix: string) {
  const keys = orderChildKeys(prefix);
  const admitted = new Map<string, string>();
  return async (context: EntryContext, order: Admissible & { metadata: { namespace?: string } }) => {
    const uid = order.metadata.uid ?? "";
    // A teardown cannot be refused; its order counts from here on by its children alone.
    if (context.teardown) return void admitted.delete(uid);
    if (admitted.has(uid)) return;
    const namespace = order.metadata.namespace ?? "";
    const place = `${context.cluster}/${namespace}`;
    const children = await childrenOf(
      context.management,
      container,
      childSelector(keys, context.cluster, namespace),
    );
    const evidence = evidenceOf(children, keys);
    if (admittedBefore(order, new Set(), evidence)) {
      admitted.set(uid, place);
      return;
    }
    const limit = await limitOf(context.kube, context.cluster, namespace, fallback);
    if (limit === undefined) return;
    const orders = await context.kube.list(kind, namespace, "");
    const present = new Set(orders.map((o) => o.metadata?.uid ?? ""));
    for (const [known, at] of admitted) if (at === place && !present.has(known)) admitted.delete(known);
    // Decided and recorded without an await in between: concurrent passes cannot both take the last place.
    const ids = new Set(admitted.keys());
    const taken = orders.filter((o) => o.metadata?.uid !== uid && admittedBefore(o, ids, evidence)).length;
    if (taken >= limit) {
      throw new Error(
        `namespace ${namespace} may hold ${limit} ${kind.kind} orders and holds ${taken}: this new order is not provisioned until one is deleted or the quota (annotation ${QUOTA_ANNOTATION}) is raised`,
      );
    }
    admitted.set(uid, place);
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
    RabbitMQVhost: { entry: quota(rabbitMQVhostKind, vhostKind, RABBITMQVHOST_CHILD_PREFIX) },
    MariaDBDatabase: { entry: quota(mariaDBDatabaseKind, sqlDatabaseKind, MARIADBDATABASE_CHILD_PREFIX) },
  },
};

export default plugin;
