// The administrator's connection pools, one per server address, account and credential version: a
// server whose credentials change (a rotated password in its Secret) gets a new pool and its old one is
// closed; a pool no pass has asked for within `idleMs` is closed too. Several refs naming one server with
// the same credentials share its pool.
import type { SqlServer } from "../statements/index.ts";

/** A server as the pool is opened for it; `password` is used to log in and never leaves this module. */
export interface ServerTarget {
  /** Which declaration the target comes from: a credentials Secret, or the settings. */
  source: string;
  host: string;
  port: number;
  username: string;
  password: string;
  ca?: string | undefined;
  /** The credentials' version: the Secret's uid and resourceVersion, or "settings". */
  version: string;
}

/** The pool's key: address, account and credential version; never the password. */
export function poolKey(target: ServerTarget): string {
  return `${target.host}:${target.port}/${target.username}/${target.version}`;
}

interface Held {
  server: SqlServer;
  usedAt: number;
}

export class ServerPools {
  readonly #pools = new Map<string, Held>();
  /** The pool each source uses now: a source whose key changes lets its old pool go. */
  readonly #current = new Map<string, string>();
  readonly #open: (target: ServerTarget) => SqlServer;
  readonly #idleMs: number;

  constructor(open: (target: ServerTarget) => SqlServer, idleMs: number) {
    this.#open = open;
    this.#idleMs = idleMs;
  }

  /** The pool of `target` at `now` (monotonic ms), opened on first use. */
  get(target: ServerTarget, now: number): SqlServer {
    const key = poolKey(target);
    const previous = this.#current.get(target.source);
    this.#current.set(target.source, key);
    if (previous !== undefined && previous !== key) this.#closeUnused(previous);
    let held = this.#pools.get(key);
    if (!held) {
      held = { server: this.#open(target), usedAt: now };
      this.#pools.set(key, held);
    }
    held.usedAt = now;
    this.#sweep(now);
    return held.server;
  }

  /** The keys of the pools open now. */
  keys(): string[] {
    return [...this.#pools.keys()];
  }

  #sweep(now: number): void {
    for (const [key, held] of this.#pools) {
      if (now - held.usedAt < this.#idleMs) continue;
      for (const [source, current] of this.#current) if (current === key) this.#current.delete(source);
      this.#close(key);
    }
  }

  /** Closes `key` unless another source still uses it. */
  #closeUnused(key: string): void {
    if (![...this.#current.values()].includes(key)) this.#close(key);
  }

  #close(key: string): void {
    const held = this.#pools.get(key);
    this.#pools.delete(key);
    // A pass still holding the old pool may see its statement fail: a transient failure, tried again.
    void held?.server.close().catch(() => undefined);
  }
}
