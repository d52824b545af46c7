import type { Logger } from "pino";
import { sleep, type Clock } from "./clock.ts";
import { KubeApiError, type KubeObject, type KubeRest } from "./kube-rest.ts";
import { decideLease, observe, releasedLease, type LeaseSpec, type Observation } from "./lease.ts";

// The loop around the Lease decision (lease.ts): try every retry period (with jitter) until this
// process holds the Lease, then renew every retry period; when no renewal succeeded within the renew
// deadline, leadership is lost and `onLost` runs at once.

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
}

interface LeaseObject extends KubeObject {
  spec?: LeaseSpec;
}

export class LeaderElector {
  private readonly options: LeaderElectionOptions;
  private observation: Observation | undefined;
  private lastSpec: LeaseSpec | undefined;
  private leading = false;

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
      if (await this.tryAcquireOrRenew(signal)) {
        this.setLeading(true);
        log.info({ lease: this.options.name }, "acquired the leader Lease");
        return true;
      }
      await sleep(clock, retryPeriodMs * (1 + Math.random() * 0.2), signal);
    }
    return false;
  }

  /** Renews until `signal` aborts (resolves true) or a renewal deadline passes (resolves false). */
  async keepRenewing(signal: AbortSignal): Promise<boolean> {
    const { clock, retryPeriodMs, renewDeadlineMs, log } = this.options;
    let lastRenew = clock.now();
    while (!signal.aborted) {
      await sleep(clock, retryPeriodMs, signal);
      if (signal.aborted) break;
      if (await this.tryAcquireOrRenew(signal, lastRenew + renewDeadlineMs)) lastRenew = clock.now();
      else if (clock.now() - lastRenew >= renewDeadlineMs) {
        this.setLeading(false);
        log.error(
          { lease: this.options.name },
          "lost the leader Lease: no renewal within the renew deadline",
        );
        return false;
      }
    }
    return true;
  }

  /** Hands the Lease over at shutdown so that a standby need not wait for it to expire. */
  async release(): Promise<void> {
    if (!this.leading) return;
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
    const budget = Math.max(1, (deadline ?? clock.now() + leaseDurationMs) - clock.now());
    const signal = AbortSignal.any([outer, AbortSignal.timeout(budget)]);
    try {
      const current = await this.get(signal);
      const now = clock.now();
      this.observation = observe(this.observation, current?.spec, now);
      const decision = decideLease({
        current: current?.spec,
        observation: this.observation,
        identity,
        leaseDurationMs,
        now,
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
      this.observation = observe(this.observation, written.spec, clock.now());
      this.lastSpec = written.spec;
      return true;
    } catch (error) {
      if (!outer.aborted) log.debug({ err: error }, "Lease attempt failed");
      return false;
    }
  }
}
