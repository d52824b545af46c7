// The finalizer of a rabbitmq.com topology object, as upstream's messaging-topology-operator and the
// built-in topology controller both name it, so that an object moves between them unchanged.
import type { KindRef } from "../api/index.ts";

export function topologyFinalizer(kind: KindRef): string {
  return `deletion.finalizers.${kind.plural}.rabbitmq.com`;
}
