// Teardown of a deleted order that holds the finalizer, as a list of steps over one context
// (teardown/context.ts), run as a pass's are: each records what it found and says when to look again,
// and the one status write stores Ready. Deleting is said on the first pass; the deletes follow the
// reference's order (teardown/deletes.ts) and a failed one does not stop those after it; then what
// holds the finalizer (teardown/hold.ts): while it is held, Ready says which step blocks and why, and
// the teardown is retried (with backoff after a failure); the step that releases it says Deleted.
// Under --secret-namespaces a teardown whose ControlPlane's namespace is not listed deletes nothing and
// holds the finalizer (Ready SecretsOutOfReach says what removing it by hand leaves); without the
// order's own namespace it leaves the delivered Secret to the garbage collector (its owner reference).
// Only a kind the management cluster does not serve holds no children. The OpenBao purge is the one
// step whose failure does not hold a teardown without a ControlPlane: the path is that ControlPlane's,
// and it holds the credentials of users whose deletes were issued.
import type { GatePass } from "../../gatekeeper/gatekeeper.ts";
import type { Result } from "../../runtime/loop/controller.ts";
import type { KubeObject } from "../../runtime/port/kube-rest.ts";
import type { OrderDeps } from "./deps.ts";
import { controlPlaneKey } from "./gates.ts";
import type { Backend, OrderKind, OrderObject } from "./kind.ts";
import type { OrderIdentity } from "./naming.ts";
import { resultOf } from "./requeue.ts";
import { holdingStatus } from "./status.ts";
import { writeStatus } from "./status-write.ts";
import { runSteps } from "./steps.ts";
import { noChildren, type OrderTeardown } from "./teardown/context.ts";
import { children, container, delivered, generations, passwords, purge } from "./teardown/deletes.ts";
import { failed, gone, strays } from "./teardown/hold.ts";
import { release } from "./teardown/release.ts";
import { announce, controlPlane, reach } from "./teardown/start.ts";

/** The steps of a teardown, in the reference's order (docs/orders.md, Teardown). */
const teardownSteps = [
  announce,
  controlPlane,
  reach,
  purge,
  children,
  generations,
  container,
  passwords,
  delivered,
  failed,
  gone,
  strays,
  release,
] as const;

export async function teardown<B extends Backend>(
  kind: OrderKind<B>,
  deps: OrderDeps,
  raw: KubeObject,
  order: OrderObject,
  identity: OrderIdentity,
  gate: GatePass,
): Promise<Result> {
  const context: OrderTeardown<B> = {
    kind,
    deps,
    raw,
    order,
    identity,
    namespace: controlPlaneKey({ ...identity, controlPlaneRef: order.spec.controlPlaneRef }).namespace,
    children: noChildren,
    failures: [],
  };
  const decision = await runSteps<OrderTeardown<B>>(teardownSteps, context);
  if (context.holding) {
    const status = holdingStatus(order, context.holding, deps.clock.now());
    await writeStatus(kind, deps, context, status, gate, decision.backoff?.message);
  }
  return resultOf(decision);
}
