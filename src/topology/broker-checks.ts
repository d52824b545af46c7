// Brokers restarted empty (a lost volume, a reset, a cluster made again with the same default user):
// every so often each broker the memo holds objects of is asked for the mark of its definitions
// (definitions-mark.ts); a mark that changed means the broker lost what the memo vouches for, and every
// object applied to it passes at once (src/external/lost.ts) instead of each at its own verification,
// up to a period later. A mark that cannot be read (the broker down, its login not there yet) decides
// nothing: the next check reads it again.
import { endpointLost } from "../external/index.ts";
import type { Clock } from "../runtime/base/clock.ts";
import type { ManagementClient } from "./broker/index.ts";
import { definitionsMark } from "./broker/definitions-mark.ts";
import type { ControllerDeps } from "./deps.ts";

interface Checked {
  client: ManagementClient;
  /** When a pass last reached the broker (monotonic). */
  seenAt: number;
  mark?: string;
}

/** A mark read after `before` shows the definitions made afresh; a first or unread mark shows nothing. */
export function definitionsLost(before: string | undefined, read: string | undefined): boolean {
  return before !== undefined && read !== undefined && read !== before;
}

/** Still checked: the memo holds objects of it, or a pass reached it within the period (its first ones). */
export function stillChecked(held: boolean, seenAt: number, now: number, periodMs: number): boolean {
  return held || now - seenAt < periodMs;
}

export type BrokerCheckDeps = Pick<ControllerDeps, "state" | "settings" | "clock" | "logger" | "wake">;

export class BrokerChecks {
  readonly #brokers = new Map<string, Checked>();

  /**
   * A pass reached the broker through `client`: checked from now on, with its latest login. The first
   * time, its mark is asked for at once, ahead of the pass's own requests (not waited for: a hung broker
   * holds the pass long enough), so a reset right after its first declarations changes a mark read
   * before them.
   */
  reached(deps: BrokerCheckDeps, client: ManagementClient): void {
    if (deps.settings.brokerCheckIntervalMs <= 0) return;
    const now = deps.clock.monotonic();
    const held = this.#brokers.get(client.endpoint);
    if (held) {
      Object.assign(held, { client, seenAt: now });
      return;
    }
    const broker: Checked = { client, seenAt: now };
    this.#brokers.set(client.endpoint, broker);
    void this.#check(deps, client.endpoint, broker);
  }

  /** Reads the mark of each broker still checked, at once; forgets the others. */
  async checkAll(deps: BrokerCheckDeps): Promise<void> {
    const held = deps.state.applied.endpoints();
    const now = deps.clock.monotonic();
    const checks: Promise<void>[] = [];
    for (const [endpoint, broker] of this.#brokers) {
      if (stillChecked(held.has(endpoint), broker.seenAt, now, deps.settings.verificationPeriodMs)) {
        checks.push(this.#check(deps, endpoint, broker));
      } else this.#brokers.delete(endpoint);
    }
    await Promise.all(checks);
  }

  async #check(deps: BrokerCheckDeps, endpoint: string, broker: Checked): Promise<void> {
    let read: string | undefined;
    try {
      read = await definitionsMark(broker.client, deps.state.hashKey);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      deps.logger.debug({ endpoint, error: message }, "the broker's definitions could not be checked");
      return;
    }
    const before = broker.mark;
    broker.mark = read ?? before;
    if (definitionsLost(before, read)) {
      endpointLost(deps, endpoint, deps.clock.monotonic(), "the broker's definitions were made afresh");
    }
  }
}

/**
 * Checks the brokers every `settings.brokerCheckIntervalMs` (never when 0), one round at a time, for as
 * long as the process runs.
 */
export function runBrokerChecks(
  deps: BrokerCheckDeps & { state: { brokers: BrokerChecks } },
  clock: Pick<Clock, "setTimer">,
): void {
  const intervalMs = deps.settings.brokerCheckIntervalMs;
  if (intervalMs <= 0) return;
  const round = () => {
    deps.state.brokers
      .checkAll(deps)
      .catch((error: unknown) => deps.logger.warn({ error: String(error) }, "checking the brokers failed"))
      .finally(() => clock.setTimer(round, intervalMs));
  };
  clock.setTimer(round, intervalMs);
}
