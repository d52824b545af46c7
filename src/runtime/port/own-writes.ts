import { realClock, type Clock } from "../base/clock.ts";
import type { Kind, KubeObject } from "./kube-rest.ts";
import type { DeleteOptions, Kube, ObjectRef } from "./kube.ts";

// The objects a controller wrote, each by the resourceVersion its write returned, so that a watch can
// drop the event of that very write: the pass that wrote already knew what it wrote, and a pass for
// the echo finds nothing to do. Any later version of the object (another controller's status, a
// person's edit) still passes. A delete the controller issued drops the update that only marks the
// object as being deleted; the object's disappearance still passes, unless the delete was quiet. The
// watch often reports a write before its response arrives: an event for an object with a write under
// way is judged once that write has answered.

/** How many writes are remembered at most; the oldest go first (an echo that never came). */
const CAPACITY = 20_000;

const DELETING = "deleting";
/** A delete whose caller waits for nothing its removal brings (DeleteOptions.quiet). */
const QUIETLY = "deleting quietly";

/** How long a status write of ours may go unseen by the cache before the object is passed all the same. */
const BEHIND_AT_MOST_MS = 5_000;

type Ref = { namespace?: string | undefined; name?: string | undefined };

export class OwnWrites {
  private readonly written = new Map<string, string>();
  /** Objects whose status the controller wrote: the resourceVersion that write replaced, and when. */
  private readonly replaced = new Map<string, { version: string; at: number }>();
  /** Writes under way, by object: how many, and a promise that settles when the last one answered. */
  private readonly underWay = new Map<
    string,
    { count: number; answered: Promise<void>; settle: () => void }
  >();
  private readonly capacity: number;
  private readonly clock: Pick<Clock, "monotonic">;

  constructor(clock: Pick<Clock, "monotonic"> = realClock, capacity = CAPACITY) {
    this.clock = clock;
    this.capacity = capacity;
  }

  /** `kube` with every apply, create, metadata patch and delete remembered under `cluster`. */
  recording(kube: Kube, cluster: string): Kube {
    const write = async <T>(
      kind: Kind,
      ref: Ref,
      run: () => Promise<T>,
      version: (result: T) => string | undefined,
    ) => {
      const key = keyOf(cluster, kind, ref);
      this.begin(key);
      try {
        const result = await run();
        this.remember(key, version(result));
        return result;
      } finally {
        this.end(key);
      }
    };
    const rv = (object: KubeObject) => object.metadata?.resourceVersion;
    return {
      get: (kind, ref, options) => kube.get(kind, ref, options),
      list: (kind, namespace, selector) => kube.list(kind, namespace, selector),
      listByIndex: (kind, namespace, index, value) => kube.listByIndex(kind, namespace, index, value),
      apply: (kind, object) => write(kind, object.metadata ?? {}, () => kube.apply(kind, object), rv),
      create: (kind, object) => write(kind, object.metadata ?? {}, () => kube.create(kind, object), rv),
      patchStatus: async (kind, object, status) => {
        const written = await kube.patchStatus(kind, object, status);
        const version = object.metadata?.resourceVersion;
        if (written && version !== undefined) {
          const at = this.clock.monotonic();
          this.bounded(this.replaced, keyOf(cluster, kind, object.metadata ?? {}), { version, at });
        }
        return written;
      },
      ensureFinalizer: (kind, object, finalizer) => kube.ensureFinalizer(kind, object, finalizer),
      removeFinalizer: (kind, object, finalizer) => kube.removeFinalizer(kind, object, finalizer),
      patchMetadata: (kind, object, metadata) =>
        write(kind, object.metadata ?? {}, () => kube.patchMetadata(kind, object, metadata), rv),
      delete: (kind: Kind, ref: ObjectRef, options?: DeleteOptions) =>
        write(
          kind,
          ref,
          () => kube.delete(kind, ref, options),
          () => (options?.quiet ? QUIETLY : DELETING),
        ),
    };
  }

  /**
   * True when this event is the echo of the controller's own write of `object`: its resourceVersion is
   * the one the write returned, or it only marks as deleting an object the controller deleted. Each
   * remembered write answers true once; any other version of the object forgets it.
   */
  isEcho(cluster: string, kind: Kind, object: KubeObject, previous?: KubeObject): boolean | Promise<boolean> {
    const key = keyOf(cluster, kind, object.metadata ?? {});
    const pending = this.underWay.get(key);
    if (pending) return pending.answered.then(() => this.isEcho(cluster, kind, object, previous));
    const version = this.written.get(key);
    if (version === undefined) return false;
    // A quiet delete is remembered until the removal it silences.
    if (version === QUIETLY) return onlyMarkedDeleting(previous, object);
    this.written.delete(key);
    if (version === DELETING) return onlyMarkedDeleting(previous, object);
    return version === object.metadata?.resourceVersion;
  }

  /** True when the disappearance of `object` follows a quiet delete of the controller's (answered once). */
  isQuietRemoval(cluster: string, kind: Kind, object: KubeObject): boolean | Promise<boolean> {
    const key = keyOf(cluster, kind, object.metadata ?? {});
    const pending = this.underWay.get(key);
    if (pending) return pending.answered.then(() => this.isQuietRemoval(cluster, kind, object));
    if (this.written.get(key) !== QUIETLY) return false;
    this.written.delete(key);
    return true;
  }

  /**
   * True when `object` is the version a status write of the controller replaced: the cache has not seen
   * that write yet, and a pass on it would judge an outdated status and meet a conflict when it writes.
   * Any other version (the write's own, a later one) answers false from then on, and so does the
   * replaced one once `BEHIND_AT_MOST_MS` passed: a watch that stalls must not hold the object back.
   */
  isBehind(cluster: string, kind: Kind, object: KubeObject): boolean {
    const key = keyOf(cluster, kind, object.metadata ?? {});
    const replaced = this.replaced.get(key);
    if (replaced === undefined) return false;
    const behind =
      replaced.version === object.metadata?.resourceVersion &&
      this.clock.monotonic() - replaced.at < BEHIND_AT_MOST_MS;
    if (!behind) this.replaced.delete(key);
    return behind;
  }

  private begin(key: string): void {
    const pending = this.underWay.get(key);
    if (pending) {
      pending.count++;
      return;
    }
    let settle = () => {};
    const answered = new Promise<void>((resolve) => (settle = resolve));
    this.underWay.set(key, { count: 1, answered, settle });
  }

  private end(key: string): void {
    const pending = this.underWay.get(key);
    if (!pending || --pending.count > 0) return;
    this.underWay.delete(key);
    pending.settle();
  }

  private remember(key: string, version: string | undefined): void {
    if (version !== undefined) this.bounded(this.written, key, version);
  }

  private bounded<V>(map: Map<string, V>, key: string, value: V): void {
    map.delete(key);
    map.set(key, value);
    if (map.size > this.capacity) {
      const oldest = map.keys().next().value;
      if (oldest !== undefined) map.delete(oldest);
    }
  }
}

function keyOf(cluster: string, kind: Kind, ref: Ref): string {
  return JSON.stringify([cluster, kind.group, kind.kind, ref.namespace ?? "", ref.name ?? ""]);
}

/** An update whose only news is the deletionTimestamp (and what the API server sets with it). */
function onlyMarkedDeleting(previous: KubeObject | undefined, object: KubeObject): boolean {
  if (!previous || previous.metadata?.deletionTimestamp || !object.metadata?.deletionTimestamp) return false;
  const rest = (o: KubeObject) => {
    const metadata = { ...o.metadata };
    delete metadata.resourceVersion;
    delete metadata.deletionTimestamp;
    delete metadata.deletionGracePeriodSeconds;
    delete metadata.generation;
    delete metadata.managedFields;
    return JSON.stringify({ ...o, metadata });
  };
  return rest(previous) === rest(object);
}
