// The condition transitions and the teardown steps of the built-in controllers' objects (the topology
// and the SQL kinds), as Events on the management cluster. The writes are started, not awaited: a new User records two
// Events, and the User queue is what a rotation storm waits on (docs/performance.md).
import type { TransitionEvents } from "../external/index.ts";
import type { Condition } from "../runtime/base/conditions.ts";
import type { EventRecorder } from "../runtime/port/events.ts";
import type { KubeRest } from "../runtime/port/kube-rest.ts";

// A condition written without a message (upstream's omitempty) reads as an empty one.
const asRuntime = (c: Condition): Condition => ({ ...c, message: (c.message as string | undefined) ?? "" });

export function externalEvents(recorder: EventRecorder, management: KubeRest): TransitionEvents {
  return {
    record(kind, { metadata }, before, after, type) {
      if (type === "none") return;
      const { name, namespace, uid, resourceVersion } = metadata;
      // The recorder logs a failure and never throws.
      void recorder.recordTransitions(
        management,
        { ...kind, namespaced: true },
        { metadata: { name, namespace, uid, resourceVersion } },
        before?.map(asRuntime),
        after.map(asRuntime),
        type,
      );
    },
    teardown(kind, { metadata }, reason, message) {
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
