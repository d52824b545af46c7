import type { Kind, KubeObject } from "../port/kube-rest.ts";
import type { LaneSettings, Reconciler, Request } from "../loop/controller.ts";

// What a backend declares of a controller: its reconciler, the objects it watches and its lanes. The
// manager (manager.ts) builds the controller from it and feeds it from the caches of its watches.

export interface WatchSpec {
  kind: Kind;
  /** Which clusters to watch: every engaged cluster (default) or the management cluster ("") only. */
  clusters?: "all" | "management";
  namespace?: string;
  labelSelector?: string;
  /** Which reconcile requests an object causes; default: the object itself. */
  map?: (object: KubeObject, cluster: string) => Request[];
  /**
   * Which updates cause requests; default: every update. See predicates.ts. A promise defers the
   * request until it settles (see own-writes.ts).
   */
  update?: (previous: KubeObject, object: KubeObject, cluster: string) => boolean | Promise<boolean>;
  /** Which additions cause requests; default: every one. */
  add?: (object: KubeObject, cluster: string) => boolean | Promise<boolean>;
  /** Which removals cause requests; default: every one. */
  delete?: (object: KubeObject, cluster: string) => boolean | Promise<boolean>;
}

export interface ControllerSpec {
  name: string;
  reconcile: Reconciler;
  watches: WatchSpec[];
  /** Workers of this controller; default `max-concurrent-reconciles`. */
  workers?: number;
  /** A lane per endpoint, each with its budget of the workers (loop/controller.ts). */
  lanes?: LaneSettings;
  /**
   * Whether the object's own status says work falls due by `nowMs` (an order's rotation moment): its
   * pass is then urgent, converged or not (rank.ts).
   */
  due?: (object: KubeObject, nowMs: number) => boolean;
}
