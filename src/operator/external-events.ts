// The condition transitions and the teardown steps of the built-in controllers' objects (the topology
// and the SQL kinds), as Events on the management cluster; of an order's children only the failures, as
// the order says their steps. The writes are started, not awaited: the User queue is what a rotation
// storm waits on (docs/performance.md).
import {
  MARIADBDATABASE_CHILD_PREFIX,
  orderChildKeys,
  RABBITMQVHOST_CHILD_PREFIX,
} from "../api/contracts.ts";
import type { ObjectMeta } from "../api/index.ts";
import type { TransitionEvents } from "../external/index.ts";
import type { Condition } from "../runtime/base/conditions.ts";
import type { EventRecorder } from "../runtime/port/events.ts";
import type { KubeRest } from "../runtime/port/kube-rest.ts";

// A condition written without a message (upstream's omitempty) reads as an empty one.
const asRuntime = (c: Condition): Condition => ({ ...c, message: (c.message as string | undefined) ?? "" });

/**
 * A new object's first status is one Event, its Ready condition's: a new User's PasswordSynced says
 * nothing its Ready does not, and every Event is a write the API server pays for.
 */
export function firstStatusOnce(
  before: readonly Condition[] | undefined,
  after: readonly Condition[],
): readonly Condition[] {
  if ((before ?? []).length > 0) return after;
  const ready = after.filter((c) => c.type === "Ready");
  return ready.length > 0 ? ready : after;
}

const ORDER_NAME_LABELS = [RABBITMQVHOST_CHILD_PREFIX, MARIADBDATABASE_CHILD_PREFIX].map(
  (prefix) => orderChildKeys(prefix).name,
);

/**
 * An order's child (a Vhost, User, Permission, Database, User or Grant an order made): the order's own
 * Events say each of its steps (provisioned, rotated, swept), so the child records its failures only.
 */
export function isOrderChild(metadata: ObjectMeta): boolean {
  return ORDER_NAME_LABELS.some((label) => metadata.labels?.[label] !== undefined);
}

export function externalEvents(recorder: EventRecorder, management: KubeRest): TransitionEvents {
  return {
    record(kind, { metadata }, before, after, type) {
      if (type === "none") return;
      const child = isOrderChild(metadata);
      if (child && type === "Normal") return;
      const { name, namespace, uid, resourceVersion } = metadata;
      // The recorder logs a failure and never throws.
      void recorder.recordTransitions(
        management,
        { ...kind, namespaced: true },
        { metadata: { name, namespace, uid, resourceVersion } },
        before?.map(asRuntime),
        firstStatusOnce(before, after)
          .filter((c) => !child || c.status === "False")
          .map(asRuntime),
        type,
      );
    },
    teardown(kind, { metadata }, reason, message) {
      if (isOrderChild(metadata)) return;
      const { name, namespace, uid, resourceVersion } = metadata;
      void recorder.emit(
        management,
        { ...kind, namespaced: true },
        { metadata: { name, namespace, uid, resourceVersion } },
        { type: "Normal", reason, action: "Delete", note: message },
      );
    },
  };
}
