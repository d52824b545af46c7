// The Normal events of an order's teardown, as seed 004 has them: Deleting when the first pass of a
// deleted order that holds its finalizer starts, Deleted when a pass releases the finalizer. The order
// writes no status while it is torn down, so the transition is remembered here, per process (a restart
// in the middle says Deleting again). A pass may still find a released order in its cache before the
// watch reports it gone: the uids whose Deleted was said are kept, so it says neither event twice.
import type { EventSink } from "./deps.ts";
import type { Backend, OrderKind } from "./kind.ts";
import { teardownFinalizer } from "./naming.ts";
import type { Request } from "../../runtime/loop/controller.ts";
import type { Kube } from "../../runtime/port/kube.ts";

export interface Deleting {
  target: { cluster: string; namespace: string; name: string; uid: string };
  kind: string;
}

/** Enough for the stale passes of every order torn down in the last minutes; a uid is a few bytes. */
const FINISHED_KEPT = 10_000;

export class TeardownEvents {
  private readonly sink: EventSink;
  private readonly started = new Set<string>();
  /** Uids whose Deleted was emitted, oldest first, at most `FINISHED_KEPT`. */
  private readonly finished = new Set<string>();

  constructor(sink: EventSink) {
    this.sink = sink;
  }

  /** The order being torn down (Deleting emitted on its first pass), or undefined. */
  async before<B extends Backend>(
    home: Kube,
    kind: OrderKind<B>,
    request: Request,
  ): Promise<Deleting | undefined> {
    const order = await home.get(kind.gvk, request).catch(() => undefined);
    const meta = order?.metadata;
    if (!meta?.deletionTimestamp || !(meta.finalizers ?? []).includes(teardownFinalizer(kind.naming))) {
      return undefined;
    }
    const deleting = { target: { ...request, uid: meta.uid ?? "" }, kind: kind.gvk.kind };
    if (!this.started.has(deleting.target.uid) && !this.finished.has(deleting.target.uid)) {
      this.started.add(deleting.target.uid);
      await this.emit(
        deleting,
        "Deleting",
        `the ${deleting.kind} is deleted: removing its children, backup and delivered Secret`,
      );
    }
    return deleting;
  }

  /** The pass released the finalizer. */
  async done(deleting: Deleting): Promise<void> {
    const { uid } = deleting.target;
    this.started.delete(uid);
    if (this.finished.has(uid)) return;
    this.finished.add(uid);
    if (this.finished.size > FINISHED_KEPT) {
      const oldest = this.finished.values().next().value;
      if (oldest !== undefined) this.finished.delete(oldest);
    }
    await this.emit(
      deleting,
      "Deleted",
      `the ${deleting.kind}'s children, backup and delivered Secret are removed`,
    );
  }

  private async emit(deleting: Deleting, reason: string, message: string): Promise<void> {
    try {
      await this.sink.emit(deleting.target, { type: "Normal", reason, message });
    } catch {
      // Events are best effort; the teardown's log lines say the same.
    }
  }
}
