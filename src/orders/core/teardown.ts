// Teardown of a deleted order, in the reference's order: the OpenBao path, the kind's per-generation
// children (every access child, then every account child), the container child (once it carries the
// order's current policy), the password Secrets, then the delivered Secret if the order controls it. A
// step that fails does not stop the steps after it. While the finalizer is held, Ready says which step blocks and why,
// and the teardown is retried (with backoff after a failure). With the ControlPlane gone the finalizer is
// released in the pass that issued the deletes, without waiting for the children to go (the topology
// controller lets go of a CR whose RabbitmqCluster is gone), but only once every delete was issued: a
// failed listing or a failed delete (the port reads a 404 as done) keeps the finalizer and is retried
// with backoff as with the ControlPlane present, since releasing it would orphan what was not deleted.
// Under --secret-namespaces a teardown whose ControlPlane's namespace is not listed deletes nothing and
// holds the finalizer (Ready SecretsOutOfReach says what removing it by hand leaves); without the
// order's own namespace it leaves the delivered Secret to the garbage collector (its owner reference).
// Only a kind the management cluster does not serve holds no children. The OpenBao purge is the one
// step whose failure does not hold a teardown without a ControlPlane: the path is that ControlPlane's,
// and it holds the credentials of users whose deletes were issued. The steps run as a pass's do: each
// records what it found and says when to look again, and the one status write stores Ready.
import { secretKind, type KindRef } from "../../api/index.ts";
import type { GatePass } from "../../gatekeeper/gatekeeper.ts";
import type { Result } from "../../runtime/loop/controller.ts";
import { TransientError } from "../../runtime/base/errors.ts";
import type { KubeObject } from "../../runtime/port/kube-rest.ts";
import { isNotServed } from "../../runtime/port/kube.ts";
import { readControlPlane } from "./admission.ts";
import { DELETING, REQUEUE } from "./conditions.ts";
import type { OrderDeps } from "./deps.ts";
import { apiErrorText } from "./errors.ts";
import { controlPlaneKey, teardownReachGate, type ControlPlaneView } from "./gates.ts";
import type { Backend, OrderKind, OrderObject } from "./kind.ts";
import {
  backupPath,
  childSelector,
  deliveredSecretName,
  isControllerRefTo,
  isOwnChild,
  teardownFinalizer,
  type OrderIdentity,
} from "./naming.ts";
import { after, backoff, none, resultOf } from "./requeue.ts";
import { resolveSpec } from "./spec.ts";
import { listContainers, PolicyNotWritten, releaseContainer } from "./containers.ts";
import { holdingStatus } from "./status.ts";
import { runSteps, type PassStep } from "./steps.ts";
import { writeStatus } from "./status-write.ts";

/** The order's children in the ControlPlane's namespace, as one listing found them. */
interface Children {
  /** The kind's per-generation children, per kind in the teardown's order (access child, account child). */
  perKind: (readonly [KindRef, KubeObject[]])[];
  secrets: KubeObject[];
  container: KubeObject[];
}

const noChildren: Children = { perKind: [], secrets: [], container: [] };

/** What the steps of one teardown share: what was read, and what they found so far. */
interface Scope {
  raw: KubeObject;
  order: OrderObject;
  identity: OrderIdentity;
  controlPlane: ControlPlaneView | undefined;
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

type Step = PassStep<Scope>;

export async function teardown<B extends Backend>(
  kind: OrderKind<B>,
  deps: OrderDeps,
  raw: KubeObject,
  order: OrderObject,
  identity: OrderIdentity,
  gate: GatePass,
): Promise<Result> {
  const placement = { ...identity, controlPlaneRef: order.spec.controlPlaneRef };
  const scope: Scope = {
    raw,
    order,
    identity,
    controlPlane: await readControlPlane(deps.management, placement),
    namespace: controlPlaneKey(placement).namespace,
    children: noChildren,
    failures: [],
  };
  const decision = await runSteps(steps(kind, deps), scope);
  if (scope.holding) {
    const status = holdingStatus(order, scope.holding, deps.clock.now());
    await writeStatus(kind, deps, scope, status, gate, decision.backoff?.message);
  }
  return resultOf(decision);
}

/** The steps of a teardown, in the reference's order. A delete that fails does not stop those after it. */
function steps<B extends Backend>(kind: OrderKind<B>, deps: OrderDeps): Step[] {
  const { management, home } = deps;
  const { naming } = kind;
  const logKey = (scope: Scope) => ({
    order: {
      cluster: scope.identity.cluster,
      namespace: scope.identity.namespace,
      name: scope.identity.name,
    },
  });
  /** Runs one delete; false (and its failure recorded) when it threw. */
  const attempt = async (scope: Scope, what: string, run: () => Promise<void>): Promise<boolean> => {
    try {
      await run();
      return true;
    } catch (error) {
      scope.failures.push(`${what} failed: ${apiErrorText(error)}`);
      return false;
    }
  };
  const go = { wake: none };

  const reach: Step = async (scope) => {
    const { identity, namespace } = scope;
    const gate = teardownReachGate(deps.settings.secretNamespaces, identity, namespace, {
      finalizer: teardownFinalizer(naming),
      selector: childSelector(naming, identity),
    });
    if (gate.open) {
      scope.deliveredSecret = gate.value.deliveredSecret;
      return go;
    }
    deps.log.warn({ ...logKey(scope), namespace }, "teardown: Secrets out of reach, nothing deleted");
    scope.holding = gate.gate;
    return { wake: none, stop: true };
  };

  const purge: Step = async (scope) => {
    const { identity, namespace } = scope;
    const purged = await attempt(scope, "purging the backup", () =>
      deps.store.purge(backupPath(naming, identity, namespace)),
    );
    scope.purgeFailed = !purged;
    return go;
  };

  const list: Step = async (scope) => {
    await attempt(scope, "listing the children", async () => {
      scope.children = await listChildren(kind, deps, scope);
    });
    return go;
  };

  const perKind: Step = async (scope) => {
    for (const [k, items] of scope.children.perKind) {
      await attempt(scope, `deleting the ${k.kind}s`, async () => {
        for (const item of items) await management.delete(k, refOf(item));
      });
    }
    return go;
  };

  const container: Step = async (scope) => {
    const { identity } = scope;
    const policy = resolveSpec(scope.order).deletionPolicy;
    for (const child of scope.children.container) {
      const name = `${scope.namespace}/${child.metadata?.name ?? ""}`;
      // A container whose operator has not taken up the policy yet stays until a later pass (with the
      // ControlPlane gone there is none: it goes now).
      await attempt(scope, `deleting the ${kind.container.gvk.kind} CR ${name}`, async () => {
        try {
          await releaseContainer(kind, management, identity, child, policy, scope.controlPlane !== undefined);
        } catch (error) {
          if (!(error instanceof PolicyNotWritten)) throw error;
          // The other deletes go ahead; the container stays, and the wait for the children holds the order.
          deps.log.warn(
            { ...logKey(scope), container: name },
            `teardown: the ${kind.container.gvk.kind} CR was not deleted: ${error.message}`,
          );
        }
      });
    }
    return go;
  };

  const passwords: Step = async (scope) => {
    await attempt(scope, "deleting the password Secrets", async () => {
      for (const secret of scope.children.secrets) await management.delete(secretKind, refOf(secret));
    });
    return go;
  };

  const delivered: Step = async (scope) => {
    const { identity } = scope;
    if (!scope.deliveredSecret) return go;
    await attempt(scope, "deleting the delivered Secret", async () => {
      const name = deliveredSecretName(identity);
      const secret = await home.get(secretKind, { namespace: identity.namespace, name });
      if ((secret?.metadata?.ownerReferences ?? []).some((r) => isControllerRefTo(naming, identity, r))) {
        await home.delete(secretKind, { namespace: identity.namespace, name });
      }
    });
    return go;
  };

  // Without a ControlPlane the backup's path is that ControlPlane's, and its purge does not hold the
  // finalizer; every other step does, whether or not the ControlPlane exists.
  const failed: Step = async (scope) => {
    const tolerated = !scope.controlPlane && scope.purgeFailed ? 1 : 0;
    if (scope.failures.length <= tolerated) return go;
    const message = `teardown: ${scope.failures.join("; ")}; retried with backoff`;
    scope.holding = deleting(message);
    return { wake: backoff(message), stop: true };
  };

  const gone: Step = async (scope) => {
    if (!scope.controlPlane) {
      if (scope.failures.length > 0)
        deps.log.warn(
          { ...logKey(scope), failures: scope.failures },
          "teardown: the ControlPlane is gone and every delete was issued; releasing the finalizer without the backup's purge",
        );
      return go;
    }
    let left: number;
    try {
      const now = await listChildren(kind, deps, scope);
      left =
        now.perKind.reduce((n, [, items]) => n + items.length, 0) + now.container.length + now.secrets.length;
    } catch (error) {
      const message = `teardown: listing the children failed: ${apiErrorText(error)}; retried with backoff`;
      scope.holding = deleting(message);
      return { wake: backoff(message, undefined, error), stop: true };
    }
    if (left === 0) return go;
    deps.log.info({ ...logKey(scope), left }, "teardown: waiting for the children to go");
    scope.holding = deleting(`teardown: waiting for ${left} children to be removed`);
    return { wake: after(REQUEUE.short, "waiting"), stop: true };
  };

  // Every child gone: the accounts of the generations the status names (the order made them: it
  // delivered them) are removed by name, as a completed sweep removes strays. A live User lost (its
  // finalizer stripped) leaves its broker user behind, still in its grace when the order goes; with the
  // vhost deleted first no permission names it any more. An account of the order's naming scheme that
  // the order never delivered (one it refused to take over) is left alone.
  const strays: Step = async (scope) => {
    const cp = scope.controlPlane;
    const status = scope.order.status;
    const known = [status?.passwordGeneration, status?.previousPasswordGeneration]
      .filter((n): n is number => n !== undefined && n > 0)
      .map((n) => kind.userName(scope.identity, n));
    if (!cp || !kind.removeStrayAccounts || known.length === 0) return go;
    const bus = await kind.backend(management, cp);
    // A backend that is gone took its accounts with it.
    if (!bus.open) return go;
    const resource = kind.resource(scope.order, scope.identity);
    const ours = (username: string) => known.includes(username);
    const result = deps.strayAccounts
      ? await deps.strayAccounts(resource, ours, known)
      : await kind.removeStrayAccounts(
          management,
          bus.value,
          resource,
          ours,
          deps.settings.brokerCheckTimeoutMs,
          logKey(scope).order,
          known,
        );
    if (result.removed.length > 0)
      deps.log.warn(
        { ...logKey(scope), removed: result.removed },
        "teardown: removed accounts no child declared",
      );
    if (result.failure === undefined) return go;
    const message = `teardown: removing the accounts no child declared: ${result.failure}; retried with backoff`;
    scope.holding = deleting(message);
    return { wake: backoff(message), stop: true };
  };

  const release: Step = async (scope) => {
    try {
      await home.removeFinalizer(kind.gvk, scope.raw, teardownFinalizer(naming));
    } catch (error) {
      if (error instanceof TransientError) throw error;
      throw new TransientError(
        `removing the finalizer ${teardownFinalizer(naming)} failed: ${apiErrorText(error)}`,
        { cause: error },
      );
    }
    const leftToCollector = scope.deliveredSecret
      ? {}
      : {
          deliveredSecret:
            "out of reach (secret-namespaces): the garbage collector removes it with the order",
        };
    deps.log.info({ ...logKey(scope), ...leftToCollector }, "teardown: done, finalizer released");
    await deps.released?.();
    return go;
  };

  return [reach, purge, list, perKind, container, passwords, delivered, failed, gone, strays, release];
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

/**
 * The order's children, by name and labels alone, not the recorded uid: the teardown also removes what
 * an earlier order of this identity left behind (its credentials are a dead order's), as the orphan
 * sweep would.
 */
async function listChildren<B extends Backend>(
  kind: OrderKind<B>,
  deps: OrderDeps,
  scope: Scope,
): Promise<Children> {
  const { management } = deps;
  const { identity, namespace: ns } = scope;
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

const deleting = (message: string) => ({ reason: DELETING, message });

const refOf = (o: KubeObject) => ({ namespace: o.metadata?.namespace ?? "", name: o.metadata?.name ?? "" });
