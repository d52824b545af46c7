// The write fence every writer asks right before a write goes out (API server, broker, OpenBao,
// MariaDB): the port and the backends' clients depend on this, the Lease's fence (lease-fence.ts)
// implements it.

/** A write refused because this process does not hold a valid Lease: it is stepping down. */
export class FencedWriteError extends Error {
  override name = "FencedWriteError";
  constructor(what: string) {
    super(`${what} refused: this process does not hold a valid leader Lease`);
  }
}

/** Asked right before a write goes out. */
export interface WriteFence {
  /** Throws FencedWriteError when this process may not write now; `what` names the write (no secret). */
  check(what: string): void;
  /** The same as a boolean, for writers that never throw (the event recorder): false = refused. */
  permits(what: string): boolean;
}

/** No fence: the process runs with --leader-elect=false, and every write goes out. */
export const openFence: WriteFence = {
  check() {},
  permits: () => true,
};
