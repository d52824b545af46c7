// Children of an order that no longer exists. A tenant who strips the teardown finalizer, an older etcd
// snapshot of the order's cluster, or a deletion that bypassed the operator leaves the order's children
// behind: broker users with working passwords, password Secrets and the backup. A pass for an order
// that is not there (its deletion, or any event of a child that names it) looks for them, and after a
// delay (the order may be back: a restore, a cluster registered again) removes them as the teardown
// would, under the deletion policy the container child last carried.
import { secretKind } from "../../api/index.ts";
import type { Result } from "../../runtime/loop/controller.ts";
import type { KubeObject } from "../../runtime/port/kube-rest.ts";
import { isNotServed } from "../../runtime/port/kube.ts";
import { REQUEUE } from "./conditions.ts";
import type { OrderDeps } from "./deps.ts";
import { apiErrorText } from "./errors.ts";
import type { Backend, OrderKind } from "./kind.ts";
import { backupPath, childSelector, isOwnChild, type OrderKey } from "./naming.ts";
import { after, decideRequeue, none, resultOf, type Wake } from "./requeue.ts";

export async function reapOrphans<B extends Backend>(
  kind: OrderKind<B>,
  deps: OrderDeps,
  order: OrderKey,
): Promise<Result> {
  return resultOf(decideRequeue([await reap(kind, deps, order)]));
}

/** Looks for the absent order's leftovers, removes them once their delay has passed; when to look again. */
async function reap<B extends Backend>(kind: OrderKind<B>, deps: OrderDeps, order: OrderKey): Promise<Wake> {
  const reaping = deps.orphans;
  if (!reaping) return none;
  const { management } = deps;
  const selector = childSelector(kind.naming, order);
  const own = (items: KubeObject[]) =>
    items.filter((i) =>
      isOwnChild(kind.naming, order, { name: i.metadata?.name ?? "", labels: i.metadata?.labels }),
    );
  const listed = async (k: Parameters<typeof management.list>[0]) => {
    try {
      return own(await management.list(k, "", selector));
    } catch (error) {
      if (isNotServed(error)) return [];
      throw error;
    }
  };
  const perKind = await Promise.all(kind.teardownKinds.map(async (k) => [k, await listed(k)] as const));
  const containers = await listed(kind.container.gvk);
  const secrets = await listed(secretKind);
  const left = perKind.reduce((n, [, items]) => n + items.length, 0) + containers.length + secrets.length;
  if (left === 0) {
    reaping.sightings.forget(order);
    return none;
  }
  // In-process sightings: a wall clock stepped forward must not bring a removal closer.
  const now = deps.clock.monotonic();
  const due = reaping.sightings.since(order, now) + reaping.delayMs;
  const log = { order, left };
  if (due > now) {
    deps.log.info(
      log,
      `the order is gone but ${left} of its children are left; they are removed in ${Math.ceil((due - now) / 1000)} s unless it comes back`,
    );
    return after(due - now, "deadline");
  }
  deps.log.warn(log, "the order is gone: removing the children it left behind");
  // The backup path of every ControlPlane namespace the leftovers are in (one, unless the order moved).
  const namespaces = new Set(
    [...perKind.flatMap(([, items]) => items), ...containers, ...secrets].map(
      (o) => o.metadata?.namespace ?? "",
    ),
  );
  const failures: string[] = [];
  const attempt = async (what: string, run: () => Promise<void>) => {
    try {
      await run();
    } catch (error) {
      failures.push(`${what}: ${apiErrorText(error)}`);
    }
  };
  for (const ns of namespaces)
    await attempt("purging the backup", () => deps.store.purge(backupPath(kind.naming, order, ns)));
  const ref = (o: KubeObject) => ({ namespace: o.metadata?.namespace ?? "", name: o.metadata?.name ?? "" });
  for (const [k, items] of perKind) {
    for (const item of items)
      await attempt(`deleting ${k.kind} ${ref(item).name}`, () => management.delete(k, ref(item)));
  }
  // The container goes with the policy it last carried: the order's, the last time it was applied.
  for (const item of containers) {
    await attempt(`deleting ${kind.container.gvk.kind} ${ref(item).name}`, () =>
      management.delete(kind.container.gvk, ref(item)),
    );
  }
  // Password Secrets once no account child reads them any more (the topology operator removes a user
  // with them).
  const users = perKind.reduce((n, [, items]) => n + items.length, 0);
  if (users === 0) {
    for (const item of secrets)
      await attempt(`deleting Secret ${ref(item).name}`, () => management.delete(secretKind, ref(item)));
  }
  if (failures.length > 0)
    deps.log.warn({ ...log, failures }, "removing the children left behind failed in part; retried");
  // Looked at again until nothing is left: the password Secrets go in a later pass.
  return after(REQUEUE.short, "waiting");
}
