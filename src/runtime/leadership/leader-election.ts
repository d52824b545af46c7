import type { Logger } from "pino";
import { sleep, type Clock } from "../base/clock.ts";
import { KubeApiError, type KubeObject, type KubeRest } from "../port/kube-rest.ts";
import type { LeaseFence } from "./lease-fence.ts";
import { decideLease, lapsed, observe, releasedLease, type LeaseSpec, type Observation } from "./lease.ts";

// The loop around the Lease decision (lease.ts): try every retry period (with jitter) until this
// process holds the Lease, then renew every retry period; when no renewal succeeded within the renew
// deadline, leadership is lost at once. Every deadline is on the monotonic clock (Clock.monotonic),
// measured from the start of the last successful attempt; the wall clock only stamps the record.
// Each success and the end of leadership are told to the write fence (lease-fence.ts).

export interface LeaderElectionOptions {
  rest: KubeRest;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  clock: Clock;
  log: Logger;
  onStatus?: (leading: boolean) => void;
  /** Told of every successful acquire or renewal, and revoked when leadership ends. */
  fence?: LeaseFence;
}

interface LeaseObject extends KubeObject {
  spec?: LeaseSpec;
}

export class LeaderElector {
  private readonly options: LeaderElectionOptions;
  private observation: Observation | undefined;
  private lastSpec: LeaseSpec | undefined;
  private leading = false;
  /** Monotonic start of the last successful attempt. */
  private renewedAt = 0;
  /** Aborted by stepDown: a fenced write found the hold lapsed. */
  private readonly steppingDown = new AbortController();

  constructor(options: LeaderElectionOptions) {
    this.options = options;
  }

  isLeader(): boolean {
    return this.leading;
  }

  private get path(): string {
    const { namespace } = this.options;
    return `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases`;
  }

  /** Resolves once this process leads, or with false when `signal` aborts first. */
  async acquire(signal: AbortSignal): Promise<boolean> {
    const { clock, retryPeriodMs, log } = this.options;
    log.info({ lease: this.options.name, identity: this.options.identity }, "waiting for the leader Lease");
    while (!signal.aborted) {
      const started = clock.monotonic();
      if (await this.tryAcquireOrRenew(signal)) {
        this.renewed(started);
        this.setLeading(true);
        log.info({ lease: this.options.name }, "acquired the leader Lease");
        return true;
      }
      await sleep(clock, retryPeriodMs * (1 + Math.random() * 0.2), signal);
    }
    return false;
  }

  /**
   * Renews until `signal` aborts (resolves true), or until leadership is lost (resolves false): no
   * renewal within the renew deadline, or `stepDown`. A deadline that passed while the process was
   * paused is noticed before any further attempt.
   */
  async keepRenewing(signal: AbortSignal): Promise<boolean> {
    const { clock, retryPeriodMs, renewDeadlineMs } = this.options;
    const stop = AbortSignal.any([signal, this.steppingDown.signal]);
    const expired = () => lapsed(this.renewedAt, renewDeadlineMs, clock.monotonic());
    while (!stop.aborted) {
      await sleep(clock, retryPeriodMs, stop);
      if (stop.aborted) break;
      if (expired()) return this.lost("no renewal within the renew deadline");
      const started = clock.monotonic();
      if (await this.tryAcquireOrRenew(stop, this.renewedAt + renewDeadlineMs)) this.renewed(started);
      else if (expired()) return this.lost("no renewal within the renew deadline");
    }
    if (this.steppingDown.signal.aborted) return this.lost("a write found the hold lapsed");
    return true;
  }

  /** Ends leadership at once: keepRenewing resolves false. The fence calls it when its hold lapsed. */
  stepDown(): void {
    this.options.fence?.revoke();
    this.steppingDown.abort();
  }

  /** Hands the Lease over at shutdown so that a standby need not wait for it to expire. */
  async release(): Promise<void> {
    if (!this.leading) return;
    // Nothing of this process goes out after this point: a standby may take over at once.
    this.options.fence?.revoke();
    this.setLeading(false);
    try {
      const current = await this.get(AbortSignal.timeout(this.options.retryPeriodMs * 2));
      if (current?.spec?.holderIdentity !== this.options.identity) return;
      await this.options.rest.request("PUT", `${this.path}/${this.options.name}`, {
        body: { ...current, spec: releasedLease(current.spec, this.options.clock.now()) },
        signal: AbortSignal.timeout(this.options.retryPeriodMs * 2),
      });
      this.options.log.info({ lease: this.options.name }, "released the leader Lease");
    } catch (error) {
      this.options.log.warn({ err: error }, "could not release the leader Lease; it will expire");
    }
  }

  private renewed(started: number): void {
    this.renewedAt = started;
    this.options.fence?.renewed(started);
  }

  private lost(why: string): false {
    this.options.fence?.revoke();
    this.setLeading(false);
    this.options.log.error({ lease: this.options.name }, `lost the leader Lease: ${why}`);
    return false;
  }

  private setLeading(leading: boolean): void {
    this.leading = leading;
    this.options.onStatus?.(leading);
  }

  private get(signal: AbortSignal): Promise<LeaseObject | undefined> {
    return this.options.rest
      .request<LeaseObject>("GET", `${this.path}/${this.options.name}`, { signal })
      .catch((error: unknown) => {
        if (error instanceof KubeApiError && error.code === 404) return undefined;
        throw error;
      });
  }

  private async tryAcquireOrRenew(outer: AbortSignal, deadline?: number): Promise<boolean> {
    const { clock, identity, leaseDurationMs, log, rest } = this.options;
    // Whole milliseconds: AbortSignal.timeout refuses a fraction, and the monotonic clock has them.
    const budget = Math.max(
      1,
      Math.ceil((deadline ?? clock.monotonic() + leaseDurationMs) - clock.monotonic()),
    );
    const signal = AbortSignal.any([outer, AbortSignal.timeout(budget)]);
    try {
      const current = await this.get(signal);
      this.observation = observe(this.observation, current?.spec, clock.monotonic());
      const decision = decideLease({
        current: current?.spec,
        observation: this.observation,
        identity,
        leaseDurationMs,
        now: clock.now(),
        monotonicNow: clock.monotonic(),
      });
      if (decision.action === "wait") {
        if (decision.holder !== this.lastSpec?.holderIdentity)
          log.info({ holder: decision.holder }, "another process leads");
        this.lastSpec = current?.spec;
        return false;
      }
      const { namespace, name } = this.options;
      const body = {
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: { ...(current?.metadata ?? {}), name, namespace },
        spec: decision.spec,
      };
      const written = await (decision.action === "create"
        ? rest.request<LeaseObject>("POST", this.path, { body, signal })
        : rest.request<LeaseObject>("PUT", `${this.path}/${name}`, { body, signal }));
      this.observation = observe(this.observation, written.spec, clock.monotonic());
      this.lastSpec = written.spec;
      return true;
    } catch (error) {
      if (!outer.aborted) log.warn({ err: error, lease: this.options.name }, "Lease attempt failed");
      return false;
    }
  }
}
