// The Normal events of an order's teardown, as seed 004 has them: Deleting when the first pass of a
// deleted order that holds its finalizer starts, Deleted from the step that releases the finalizer
// (teardown/). The order writes no status while it is torn down, so the transition is remembered here,
// per process (a restart in the middle says Deleting again). A pass may still find a released order in
// its cache before the watch reports it gone: the uids whose Deleted was said are kept, so it says
// neither event twice.
import type { EventSink, EventTarget, TeardownEventLog } from "./deps.ts";

/** Enough for the stale passes of every order torn down in the last minutes; a uid is a few bytes. */
const FINISHED_KEPT = 10_000;

export class TeardownEvents implements TeardownEventLog {
  private readonly sink: EventSink;
  private readonly started = new Set<string>();
  /** Uids whose Deleted was emitted, oldest first, at most `FINISHED_KEPT`. */
  private readonly finished = new Set<string>();

  constructor(sink: EventSink) {
    this.sink = sink;
  }

  /** A teardown pass starts: Deleting, on the order's first. */
  async deleting(target: EventTarget, kind: string): Promise<void> {
    if (this.started.has(target.uid) || this.finished.has(target.uid)) return;
    this.started.add(target.uid);
    await this.emit(
      target,
      "Deleting",
      `the ${kind} is deleted: removing its children, backup and delivered Secret`,
    );
  }

  /** The pass released the finalizer. */
  async deleted(target: EventTarget, kind: string): Promise<void> {
    const { uid } = target;
    this.started.delete(uid);
    if (this.finished.has(uid)) return;
    this.finished.add(uid);
    if (this.finished.size > FINISHED_KEPT) {
      const oldest = this.finished.values().next().value;
      if (oldest !== undefined) this.finished.delete(oldest);
    }
    await this.emit(target, "Deleted", `the ${kind}'s children, backup and delivered Secret are removed`);
  }

  private async emit(target: EventTarget, reason: string, message: string): Promise<void> {
    try {
      await this.sink.emit(target, { type: "Normal", reason, message });
    } catch {
      // Events are best effort; the teardown's log lines say the same.
    }
  }
}
