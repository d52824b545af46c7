// One teardown of a deleted order as its steps share it (../teardown.ts): the kind and the deps, the
// order as read, its ControlPlane (or its absence) and the children one listing found, the deletes
// that failed, and why the finalizer is still held.
import { secretKind, type KindRef } from "../../../api/index.ts";
import type { KubeObject } from "../../../runtime/port/kube-rest.ts";
import { isNotServed } from "../../../runtime/port/kube.ts";
import { DELETING } from "../conditions.ts";
import { listContainers } from "../containers.ts";
import type { OrderDeps } from "../deps.ts";
import { apiErrorText } from "../errors.ts";
import type { ControlPlaneView } from "../gates.ts";
import type { Backend, OrderKind, OrderObject } from "../kind.ts";
import { childSelector, isOwnChild, type OrderIdentity } from "../naming.ts";

/** The order's children in the ControlPlane's namespace, as one listing found them. */
export interface Children {
  /** The kind's per-generation children, per kind in the teardown's order (access child, account child). */
  perKind: (readonly [KindRef, KubeObject[]])[];
  secrets: KubeObject[];
  container: KubeObject[];
}

export const noChildren: Children = { perKind: [], secrets: [], container: [] };

export interface OrderTeardown<B extends Backend = Backend> {
  kind: OrderKind<B>;
  deps: OrderDeps;
  raw: KubeObject;
  order: OrderObject;
  identity: OrderIdentity;
  /** Undefined until read, and when the ControlPlane is gone. */
  controlPlane?: ControlPlaneView | undefined;
  /** The ControlPlane's namespace, the ref's whether or not the ControlPlane still exists. */
  namespace: string;
  /** Whether the delivered Secret beside the order is in reach (--secret-namespaces). */
  deliveredSecret?: boolean;
  children: Children;
  /** The steps that failed, each with its error. */
  failures: string[];
  purgeFailed?: boolean;
  /** Why the finalizer is still held, for Ready; a teardown that sets none writes no status. */
  holding?: { reason: string; message: string };
}

/** Runs one delete; false (and its failure recorded) when it threw. */
export async function attempt<B extends Backend>(
  teardown: OrderTeardown<B>,
  what: string,
  run: () => Promise<void>,
): Promise<boolean> {
  try {
    await run();
    return true;
  } catch (error) {
    teardown.failures.push(`${what} failed: ${apiErrorText(error)}`);
    return false;
  }
}

export const logKey = <B extends Backend>(teardown: OrderTeardown<B>) => ({
  order: {
    cluster: teardown.identity.cluster,
    namespace: teardown.identity.namespace,
    name: teardown.identity.name,
  },
});

/** The order the teardown's Events are about. */
export const target = <B extends Backend>({ identity }: OrderTeardown<B>) => ({
  cluster: identity.cluster,
  namespace: identity.namespace,
  name: identity.name,
  uid: identity.uid ?? "",
});

export const deleting = (message: string) => ({ reason: DELETING, message });

export const refOf = (o: KubeObject) => ({
  namespace: o.metadata?.namespace ?? "",
  name: o.metadata?.name ?? "",
});

/**
 * The order's children, by name and labels alone, not the recorded uid: the teardown also removes what
 * an earlier order of this identity left behind (its credentials are a dead order's), as the orphan
 * sweep would.
 */
export async function listChildren<B extends Backend>(teardown: OrderTeardown<B>): Promise<Children> {
  const { kind, identity, namespace: ns } = teardown;
  const { management } = teardown.deps;
  const selector = childSelector(kind.naming, identity);
  const own = (items: KubeObject[]) =>
    items.filter((i) =>
      isOwnChild(kind.naming, identity, { name: i.metadata?.name ?? "", labels: i.metadata?.labels }),
    );
  const perKind = await Promise.all(
    kind.teardownKinds.map(
      async (k) => [k, own(await unlessNotServed(management.list(k, ns, selector), []))] as const,
    ),
  );
  const secrets = own(await management.list(secretKind, ns, selector));
  // Every backend's container: one per backend the order was on (containers.ts).
  const container = (await listContainers(kind, management, identity, ns)).map((c) => c.object);
  return { perKind, secrets, container };
}

/** A kind the management cluster does not serve (no topology operator installed) holds no children. */
async function unlessNotServed<T>(read: Promise<T>, empty: T): Promise<T> {
  try {
    return await read;
  } catch (error) {
    if (isNotServed(error)) return empty;
    throw error;
  }
}
