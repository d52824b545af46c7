// Writes fenced by the Lease: every write this process sends (to an API server, a broker, OpenBao,
// MariaDB) first asks the fence, right before it goes out, whether this process still holds a valid
// Lease by its own monotonic clock. A process that was paused (SIGSTOP, a long GC, a frozen VM) or
// partitioned past its Lease wakes up with a stale cache and passes in flight; the fence refuses their
// writes, logs the first refusal and has the process step down.
//
// How long a hold lasts: a renewal that succeeded is good for `renew-deadline` (10 s by default) from
// the moment its attempt started, on this process's monotonic clock. That is the time after which the
// leader gives up by itself when renewals fail (client-go's renew deadline), so the fence and the
// elector agree on when leadership ends. Measuring from the attempt's start (before its GET and PUT)
// rather than from the answer is what makes it safe: the API server stored the renewal after that
// moment, so a standby saw it after that moment too, and a standby waits `lease-duration` (15 s) of its
// own monotonic time from when it saw the record before it takes over. Between our end of hold and the
// earliest takeover lies at least `lease-duration - renew-deadline` (5 s): the margin for the two
// clocks' rates and for a write that passed the fence to reach its backend. client-go's IsLeader only
// compares the holder identity of the last record seen; this is stricter, by the clock.

import type { Logger } from "pino";
import type { Clock } from "../base/clock.ts";
import { lapsed } from "./lease.ts";
import { FencedWriteError, type WriteFence } from "../base/write-fence.ts";

export interface LeaseFenceOptions {
  clock: Clock;
  /** How long one renewal holds (see above): the renew deadline. */
  holdMs: number;
  log: Logger;
  /** Called once when a write finds the hold lapsed: the process steps down. */
  onLapsed: () => void;
}

/** The fence of a process with leader election; the elector tells it of each renewal and of the end. */
export class LeaseFence implements WriteFence {
  private readonly options: LeaseFenceOptions;
  /** Monotonic start of the last successful acquire or renewal attempt; undefined: no hold. */
  private renewedAt: number | undefined;

  constructor(options: LeaseFenceOptions) {
    this.options = options;
  }

  /** A renewal (or the acquisition) that started at monotonic time `attemptStartedAt` succeeded. */
  renewed(attemptStartedAt: number): void {
    this.renewedAt = Math.max(this.renewedAt ?? -Infinity, attemptStartedAt);
  }

  /** Leadership ended (released, lost): nothing goes out any more. */
  revoke(): void {
    this.renewedAt = undefined;
  }

  /** Whether this process holds the Lease by its own clock now. */
  holds(): boolean {
    const { clock, holdMs } = this.options;
    return this.renewedAt !== undefined && !lapsed(this.renewedAt, holdMs, clock.monotonic());
  }

  permits(what: string): boolean {
    if (this.holds()) return true;
    const { clock, log } = this.options;
    if (this.renewedAt === undefined) {
      // Not leading (yet, or any more: the step-down is under way and was logged).
      log.debug({ refused: what }, "write refused: not leading");
      return false;
    }
    const sinceRenewalMs = Math.round(clock.monotonic() - this.renewedAt);
    this.revoke();
    log.error(
      { refused: what, sinceRenewalMs, holdMs: this.options.holdMs },
      "write refused: this process's hold on the leader Lease lapsed by its own clock (paused or partitioned); stepping down",
    );
    this.options.onLapsed();
    return false;
  }

  check(what: string): void {
    if (!this.permits(what)) throw new FencedWriteError(what);
  }
}
