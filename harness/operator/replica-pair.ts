// The chart's two replicas for a long run: two operator processes with leader election at the default
// timings on one Lease, each in a working directory and log of its own. A fault takes one slot out
// (kill, pause, SIGTERM) and starts it again as a fresh process with a fresh identity, as the kubelet
// restarts a container; a replica that ends on its own (its Lease lapsed under an etcd outage) is started
// again by keep(). Both slots run at every moment outside a fault.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { OperatorProcess, type OperatorOptions } from "./operator-process.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface ReplicaPairOptions {
  /** The Lease (in the default namespace), unique per run. */
  lease: string;
  /** Each slot's working directory and log go under it (replica-0/, replica-1/). */
  workdir: string;
  /** The settings a replica of this slot starts with, but for its Lease, identity, cwd and log. */
  options: (slot: number) => OperatorOptions;
  log: (line: string) => void;
}

export class ReplicaPair {
  private readonly slots: (OperatorProcess | undefined)[] = [undefined, undefined];
  private readonly incarnations = [0, 0];
  /** Slots a fault holds: keep() leaves them to it. */
  private readonly held = new Set<number>();
  /** Replicas that ended without a fault asking (their exit code), in order. */
  readonly ownExits: string[] = [];
  private readonly options: ReplicaPairOptions;

  constructor(options: ReplicaPairOptions) {
    this.options = options;
  }

  /** Starts the slots not running, also after stopBoth() (the slots are no longer held then). */
  async startBoth(): Promise<void> {
    for (const slot of [0, 1]) {
      this.held.delete(slot);
      if (!this.running(slot)) await this.start(slot);
    }
  }

  /** The slot whose process leads, once one does (a takeover takes a Lease duration and a retry). */
  async leader(timeoutMs = 60_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      for (const slot of [0, 1]) {
        if (this.running(slot) && (await this.slots[slot]?.leading())) return slot;
      }
      if (Date.now() > deadline) throw new Error(`no replica led within ${timeoutMs} ms`);
      await sleep(250);
    }
  }

  /** The leading process, once one leads. */
  async leading(timeoutMs = 60_000): Promise<OperatorProcess> {
    const process = this.slots[await this.leader(timeoutMs)];
    if (!process) throw new Error("the leading slot has no process");
    return process;
  }

  /** Runs `fault` on the leader's slot, holding it from keep(), and starts the slot again after it. */
  async onLeader(what: string, fault: (process: OperatorProcess) => Promise<void>): Promise<void> {
    const slot = await this.leader();
    const process = this.slots[slot];
    if (!process) throw new Error(`slot ${slot} has no process`);
    this.held.add(slot);
    try {
      this.options.log(`${what}: the leader, replica ${slot} pid ${process.pid}`);
      await fault(process);
      if (process.exitCode === undefined) await process.kill();
      this.options.log(`${what}: replica ${slot} pid ${process.pid} ended with ${process.exitCode}`);
      await this.start(slot);
    } finally {
      this.held.delete(slot);
    }
  }

  /** Starts again every slot whose process ended without a fault holding it. */
  async keep(): Promise<void> {
    for (const slot of [0, 1]) {
      if (this.held.has(slot) || this.running(slot)) continue;
      const code = this.slots[slot]?.exitCode;
      if (this.slots[slot]) {
        this.ownExits.push(`replica ${slot} exited with ${code}`);
        this.options.log(`replica ${slot} ended on its own with ${code}; starting it again`);
      }
      this.held.add(slot);
      try {
        await this.start(slot);
      } finally {
        this.held.delete(slot);
      }
    }
  }

  /**
   * How many replicas say they lead now, but for one a fault holds: a thawed leader's metric may say so
   * for a moment before it reads its own clock (e2e/leader-fencing.itest.ts shows it writes nothing).
   */
  async leaders(): Promise<number> {
    const leading = await Promise.all(
      [0, 1].map(
        async (slot) => this.running(slot) && !this.held.has(slot) && (await this.slots[slot]?.leading()),
      ),
    );
    return leading.filter(Boolean).length;
  }

  async stopBoth(): Promise<void> {
    for (const slot of [0, 1]) {
      this.held.add(slot);
      await this.slots[slot]?.stop();
    }
  }

  /** The slot's working directory (its log is operator.log in it). */
  dir(slot: number): string {
    return join(this.options.workdir, `replica-${slot}`);
  }

  /** The slot's process, while it runs. */
  processOf(slot: number): OperatorProcess | undefined {
    return this.running(slot) ? this.slots[slot] : undefined;
  }

  private running(slot: number): boolean {
    return this.slots[slot] !== undefined && this.slots[slot].exitCode === undefined;
  }

  private async start(slot: number): Promise<void> {
    const n = ++this.incarnations[slot]!;
    const dir = this.dir(slot);
    mkdirSync(dir, { recursive: true });
    const process = await OperatorProcess.start({
      ...this.options.options(slot),
      replica: { lease: this.options.lease, identity: `${this.options.lease}-${slot}-${n}` },
      cwd: dir,
      logFile: join(dir, "operator.log"),
    });
    this.slots[slot] = process;
    this.options.log(`replica ${slot} started, pid ${process.pid} (incarnation ${n})`);
  }
}
