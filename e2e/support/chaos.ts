// The chaos suite: orders rotating on a short schedule, served by the chart's two replicas (leader
// election at the default timings), a login prober per order that re-reads the delivered Secret before
// every AMQP round trip, and faults at random points chosen by a seed: the leader killed with SIGKILL,
// frozen past its Lease or stopped with SIGTERM (its slot started again each time); RabbitMQ, OpenBao,
// etcd and both kube-apiservers stopped and started again; a ControlPlane's published endpoint withdrawn
// and restored for the target-cluster orders; the broker's management API, as the operator reaches it
// through a TCP proxy, unanswering or cut off while consumers still reach the broker; an order's status
// wiped; and an order's delivery stalled
// by an admission policy while its successor's User is deleted; and the leader's wall clock stepped
// back (or forward) by minutes with libfaketime, its monotonic clock untouched: it must keep its Lease
// throughout, and the step must show in the Lease's renewTime it writes. Rotations and sweeps under way during a
// fault are counted, and faults aimed at the next ones make up a shortfall. At the end it checks the
// promise (no refused login, no failure of any kind outside a fault and the 30 s after it, every order
// Ready, at most one superseded user per order within its grace, OpenBao holding the live credential,
// nothing left after deletion, a Retain order's vhost still holding its message) and returns the
// figures. Used by scripts/chaos.ts (`npm run chaos`) and e2e/chaos.itest.ts.
import { spawn } from "node:child_process";
import { appendFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { isDeepStrictEqual } from "node:util";
import * as k8s from "@kubernetes/client-node";
import type { RabbitMQVhost } from "../../src/api/index.ts";
import {
  backupPath,
  childSelector,
  deliveredSecretName,
  type OrderKey,
} from "../../src/orders/core/naming.ts";
import { RABBITMQ_NAMING, userName, vhostName } from "../../src/orders/rabbitmq/naming.ts";
import { parseDuration } from "../../src/runtime/base/duration.ts";
import { localEnv } from "../../test/support/env.ts";
import type { TestCluster } from "../../test/support/kube.ts";
import { emptyCounts, LoginProber, type LoginOutcome, type ProberCounts } from "./login-prober.ts";
import { LEADER_FAULTS, plan, type ChaosConfig, type LeaderFault, type Outage } from "./chaos-plan.ts";
import type { ChaosReport, OrderFigures } from "./chaos-report.ts";
import { overlaps, type Span, type StatusTrack } from "./chaos-overlap.ts";
import { holdOperatorLock, releaseOperatorLock } from "./operator-process.ts";
import { ReplicaPair } from "./replica-pair.ts";
import { TcpProxy } from "./tcp-proxy.ts";
import { checkRetained, retainMessage } from "./retained-message.ts";
import { openBaoRead } from "./order-env.ts";
import { stallDelivery, wipeStatus, type DeliveryStall } from "./order-faults.ts";
import { libfaketimePath, steppableClockEnv, stepWallClock } from "./wall-clock.ts";
import {
  applyOrder,
  brokerApi,
  createTargetWorld,
  deleteOrder,
  destroyTargetWorld,
  publishEndpoint,
  readOrder,
  readSecret,
  type TargetWorld,
} from "./target-cluster.ts";

interface ChaosOrder {
  name: string;
  key: OrderKey;
  cluster: TestCluster;
  retain: boolean;
  prober?: LoginProber;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });

const localenvScript = fileURLToPath(new URL("../../scripts/localenv.sh", import.meta.url));

export async function runChaos(config: ChaosConfig): Promise<ChaosReport> {
  const env = localEnv();
  // The replicas run under libfaketime for the clock-step: without it, say so before anything starts.
  libfaketimePath();
  const started = Date.now();
  const { workdir, signal } = config;
  mkdirSync(workdir, { recursive: true });
  const runLog = `${workdir}/chaos.log`;
  const operatorLog = `${workdir}/replica-{0,1}/operator.log`;
  const log = (line: string) => {
    const stamped = `${new Date().toISOString()} ${line}`;
    appendFileSync(runLog, stamped + "\n");
    config.log?.(stamped);
  };

  // localenv.sh in the environment's state folder (its own working directory, one that outlives this
  // run), its output appended to the run's log.
  const localenv = (...args: string[]) =>
    new Promise<void>((resolve, reject) => {
      const child = spawn("bash", [localenvScript, ...args], {
        cwd: env.LOCALENV_STATE,
        env: { ...process.env, LOCALENV_STATE: env.LOCALENV_STATE },
        stdio: ["ignore", "pipe", "pipe"],
      });
      const out = (chunk: Buffer) => appendFileSync(`${workdir}/localenv.log`, chunk);
      child.stdout.on("data", out);
      child.stderr.on("data", out);
      child.once("error", reject);
      child.once("exit", (code) =>
        code === 0 ? resolve() : reject(new Error(`localenv.sh ${args.join(" ")} exited with ${code}`)),
      );
    });

  const faults = plan(config);
  log(`seed ${config.seed}; ${faults.length} planned faults; workdir ${workdir}`);
  for (const f of faults) {
    log(
      `  plan +${(f.atMs / 1000).toFixed(1)}s ${f.kind} ${(f.durationMs / 1000).toFixed(1)}s` +
        (f.killAtMs !== undefined ? ` (leader killed after ${(f.killAtMs / 1000).toFixed(1)}s)` : "") +
        (f.stepS !== undefined ? ` (the leader's wall clock ${f.stepS > 0 ? "+" : ""}${f.stepS} s)` : ""),
    );
  }

  const failures: string[] = [];
  const authFailures: string[] = [];
  const outages: Record<Outage, number> = {
    rabbitmq: 0,
    openbao: 0,
    "management-apiserver": 0,
    etcd: 0,
    "target-apiserver": 0,
    "broker-unanswering": 0,
    partition: 0,
    endpoint: 0,
    "status-wipe": 0,
    "stalled-delivery": 0,
    "clock-step": 0,
  };
  const leaderFaults: Record<LeaderFault, number> = { kill: 0, pause: 0, term: 0 };
  /** The clock-steps done, each with what the leader's Lease showed of it. */
  const clockSteps: ChaosReport["clockSteps"] = [];
  /** Graces (from the successor seen live until the predecessor seen swept), per order. */
  const graces: (Span & { order: string })[] = [];
  /** Every fault's span, for the rotations and sweeps under way during one. */
  const faultSpans: Span[] = [];
  const tracks = new Map<string, StatusTrack>();
  /** Leading replicas seen at once, at most (must stay 1). */
  let mostLeaders = 0;
  /** Fault windows in progress, and when the last one ended: other failures near them are expected. */
  let activeFaults = 0;
  let lastFaultEnd = 0;
  let otherOutsideFaults = 0;
  const stopped = new Set<string>();
  let withdrawn = false;

  let world: TargetWorld | undefined;
  /** The operator's way to the broker's management API (the RabbitmqCluster's connection annotation). */
  let managementProxy: TcpProxy | undefined;
  const orders: ChaosOrder[] = [];
  const leaseName = `vb-chaos-${config.seed}-${Date.now().toString(36)}`;
  const replicas = new ReplicaPair({
    lease: leaseName,
    workdir,
    // Every replica's wall clock can be stepped through a file in its slot's folder (+0 at each start).
    options: (slot) => ({
      clusterSecretNamespace: world?.secretNs ?? "",
      keepLogs: false,
      env: steppableClockEnv(offsetFile(slot)),
    }),
    log,
  });
  function offsetFile(slot: number): string {
    return join(workdir, `replica-${slot}`, "wall-clock-offset");
  }
  const endpoint = () => `127.0.0.1:${world?.broker.amqpPort ?? 0}`;
  const orderSpec = (o: ChaosOrder | undefined) => ({
    rotation: { interval: config.interval, gracePeriod: config.grace },
    deletionPolicy: o?.retain ? "Retain" : "Delete",
  });
  /** The order the order-level faults hit: one on the management cluster, chosen by the seed. */
  const managementOrder = (): ChaosOrder => {
    const candidates = orders.filter((o) => o.key.cluster === "");
    const o = candidates[config.seed % candidates.length];
    if (!o) throw new Error("an order-level fault needs an order on the management cluster");
    return o;
  };

  /**
   * A fault of the leader, its span from the fault until a replica leads again: kill (SIGKILL, then its
   * slot restarts after `durationMs`), pause (SIGSTOP for `durationMs`, then SIGCONT: the thawed process
   * must exit by itself), term (SIGTERM: it drains and exits by itself within the chart's grace period).
   */
  const leaderFault = async (kind: LeaderFault, durationMs: number) => {
    const start = Date.now();
    await replicas.onLeader(kind, async (leader) => {
      if (kind === "kill") {
        await leader.kill();
        await sleep(durationMs, signal);
      } else if (kind === "pause") {
        leader.pause();
        await sleep(durationMs, signal);
        leader.resume();
        // Its Lease lapsed while it was frozen: it writes nothing more and exits with 1.
        const exited = await waitUntil("the thawed leader to exit", 20_000, signal, async () =>
          Promise.resolve(leader.exitCode !== undefined),
        ).then(
          () => true,
          () => false,
        );
        if (!exited) failures.push(`a leader thawed after ${durationMs} ms did not exit within 20 s`);
        else if (leader.exitCode !== 1)
          failures.push(`a thawed leader exited with ${leader.exitCode}, not 1`);
      } else {
        const code = await leader.stop(150_000);
        if (code !== 0) failures.push(`a leader stopped with SIGTERM exited with ${code}, not 0`);
      }
    });
    leaderFaults[kind]++;
    await replicas.leader();
    faultSpans.push({ kind, start, end: Date.now() });
  };

  /** The Lease's holder and how far its renewTime is off the real clock (ms; negative: behind). */
  const readLease = async (): Promise<{ holder: string; skewMs: number } | undefined> => {
    if (!world) return undefined;
    const lease = await world.management.config
      .makeApiClient(k8s.CoordinationV1Api)
      .readNamespacedLease({ name: leaseName, namespace: "default" });
    const renew = lease.spec?.renewTime;
    const renewMs = renew instanceof Date ? renew.getTime() : Date.parse(String(renew ?? ""));
    return { holder: lease.spec?.holderIdentity ?? "", skewMs: renewMs - Date.now() };
  };
  /** Each order's schedule as the status stamps it, against the real clock. */
  const schedule = async (): Promise<string> => {
    const parts: string[] = [];
    for (const o of orders) {
      const status = (await readOrderOf(o).catch(() => undefined))?.status;
      const off = (t: string | undefined) =>
        t ? `${((Date.parse(t) - Date.now()) / 1000).toFixed(0)}s` : "-";
      parts.push(
        `${o.name} gen ${status?.passwordGeneration ?? "?"} nextRotation ${off(status?.nextRotation)}` +
          ` previous ${status?.previousPasswordGeneration ?? "-"} deleteAt ${off(status?.previousPasswordDeleteAt)}`,
      );
    }
    return parts.join("; ");
  };
  /**
   * The leader's wall clock `seconds` off for `durationMs`, then back; its span from the step until the
   * clock is back and the leader seen leading after it. The leader must lead throughout (its process
   * running, its metric saying so, the Lease naming it), and the Lease's renewTime must show the step.
   */
  const clockStep = async (seconds: number, durationMs: number) => {
    const slot = await replicas.leader();
    const leader = replicas.processOf(slot);
    const before = await readLease().catch(() => undefined);
    const file = offsetFile(slot);
    const start = Date.now();
    const problems: string[] = [];
    let skewMs: number | undefined;
    const what = `a wall-clock step of ${seconds > 0 ? "+" : ""}${seconds} s`;
    const stillLeads = async (when: string) => {
      const lease = await readLease().catch(() => undefined);
      if (replicas.processOf(slot) !== leader) problems.push(`the leader ended ${when} ${what}`);
      else if (!(await leader?.leading())) problems.push(`the leader stopped leading ${when} ${what}`);
      else if (lease && before && lease.holder !== before.holder)
        problems.push(`the Lease moved from ${before.holder} to ${lease.holder} ${when} ${what}`);
      return lease;
    };
    activeFaults++;
    try {
      log(
        `clock-step: the leader, replica ${slot} pid ${leader?.pid}: wall clock ${seconds > 0 ? "+" : ""}${seconds} s ` +
          `for ${(durationMs / 1000).toFixed(1)}s; schedule: ${await schedule()}`,
      );
      stepWallClock(file, seconds);
      while (Date.now() - start < durationMs && problems.length === 0) {
        await sleep(1_000, signal);
        const lease = await stillLeads("during");
        // The renewTime the leader wrote last, the furthest off (a renewal every 2 s).
        if (lease && (skewMs === undefined || Math.abs(lease.skewMs) > Math.abs(skewMs)))
          skewMs = lease.skewMs;
      }
      log(
        `clock-step: ${what} ends; renewTime seen ${((skewMs ?? 0) / 1000).toFixed(1)}s off; schedule: ${await schedule()}`,
      );
    } finally {
      stepWallClock(file, 0);
    }
    try {
      // Back on the real clock the leader's wall clock jumps the other way: it keeps leading across that.
      for (let i = 0; i < 6 && problems.length === 0; i++) {
        await sleep(1_000, signal);
        await stillLeads("after");
      }
      const keptLease = problems.length === 0;
      if (skewMs === undefined || Math.abs(skewMs - seconds * 1_000) > 5_000)
        problems.push(
          `the leader's Lease did not show ${what} (renewTime ${skewMs === undefined ? "unread" : `${(skewMs / 1000).toFixed(1)} s`} off): libfaketime not in effect?`,
        );
      failures.push(...problems);
      for (const p of problems) log(`CLOCK-STEP ${p}`);
      clockSteps.push({ seconds, leaseSkewMs: skewMs, keptLease });
      outages["clock-step"]++;
      log(
        `clock-step: restored; the leader ${keptLease ? "kept" : "did NOT keep"} its Lease; schedule: ${await schedule()}`,
      );
    } finally {
      activeFaults--;
      lastFaultEnd = Date.now();
      faultSpans.push({ kind: "clock-step", start, end: lastFaultEnd });
    }
  };

  // The two replicas stay two: one that ends by itself (its Lease lapsed during an etcd outage) starts
  // again; never two lead at once; and each order's status is followed.
  const watch = new AbortController();
  let watching: Promise<void> | undefined;
  const startWatching = () => {
    watching = (async () => {
      while (!watch.signal.aborted) {
        await replicas.keep().catch((e: unknown) => log(`starting a replica again failed: ${String(e)}`));
        mostLeaders = Math.max(mostLeaders, await replicas.leaders());
        for (const o of orders) await track(o).catch(() => undefined);
        await sleep(1_000, watch.signal).catch(() => undefined);
      }
    })();
  };
  /** Follows an order's status: when a rotation or a sweep completes, and since when it was due. */
  const track = async (o: ChaosOrder) => {
    const status = (await readOrderOf(o))?.status;
    if (!status) return;
    const t = tracks.get(o.name) ?? { rotations: [], sweeps: [] };
    tracks.set(o.name, t);
    const now = Date.now();
    const generation = status.passwordGeneration ?? 0;
    if (t.generation !== undefined && generation > t.generation) {
      t.rotations.push({ kind: "rotation", start: Math.min(t.rotationDue ?? now, now), end: now });
    }
    // The live generation never goes back (a wiped status reads none until it is rebuilt).
    if (t.generation !== undefined && status.passwordGeneration !== undefined && generation < t.generation) {
      failures.push(`${o.name}: the live generation went back from ${t.generation} to ${generation}`);
      log(`GENERATION BACK ${o.name}: ${t.generation} -> ${generation}`);
    }
    if (t.previous !== undefined && status.previousPasswordGeneration === undefined) {
      t.sweeps.push({ kind: "sweep", start: Math.min(t.sweepDue ?? now, now), end: now });
      const since = t.rotations.at(-1)?.end;
      if (since !== undefined) graces.push({ kind: "grace", order: o.name, start: since, end: now });
    }
    t.generation = generation;
    t.previous = status.previousPasswordGeneration;
    t.rotationDue = Date.parse(status.nextRotation ?? "") || undefined;
    t.sweepDue = Date.parse(status.previousPasswordDeleteAt ?? "") || undefined;
  };

  try {
    managementProxy = await TcpProxy.to(env.RABBITMQ_MANAGEMENT_URL);
    world = await createTargetWorld(`chaos${config.seed % 1000}`, {
      managementTenants: 1,
      brokerManagementUrl: `http://127.0.0.1:${managementProxy.port}`,
    });
    const w = world;
    log(`world: cp ${w.cpNs}, target tenant ${w.assigned[0]}, management tenant ${w.managementTenants[0]}`);
    await publishEndpoint(w, endpoint());
    // The replicas share this run's operator lock: another run's operator must not serve beside them.
    await holdOperatorLock();
    await replicas.startBoth();
    await replicas.leader();

    for (let i = 0; i < config.orders; i++) {
      const onTarget = i < config.targetOrders;
      const namespace = (onTarget ? w.assigned[0] : w.managementTenants[0]) ?? "";
      const name = `chaos-${i}`;
      // The last order of several is a Retain order: its vhost must outlive it, nothing else.
      const retain = config.orders > 1 && i === config.orders - 1;
      orders.push({
        name,
        key: { cluster: onTarget ? w.clusterName : "", namespace, name },
        cluster: onTarget ? w.target : w.management,
        retain,
      });
      await applyOrder(
        w,
        { namespace, on: onTarget ? "target" : "management" },
        name,
        orderSpec(orders.at(-1)),
      );
    }
    for (const o of orders) {
      await waitUntil(`${o.name} Ready`, 120_000, signal, async () => isReady(await readOrderOf(o)));
    }
    log(`${orders.length} orders Ready; probers start`);
    startWatching();
    for (const o of orders) {
      o.prober = new LoginProber({
        core: o.cluster.core,
        namespace: o.key.namespace,
        order: o.name,
        intervalMs: 500,
        maxAttempts: Number.MAX_SAFE_INTEGER,
        maxDurationMs: Number.MAX_SAFE_INTEGER,
        onOutcome: (outcome: LoginOutcome, username: string) => {
          if (outcome.kind === "auth") {
            const line = `${new Date().toISOString()} ${o.name} user ${username}: ${outcome.message}`;
            authFailures.push(line);
            log(`AUTH FAILURE ${line}`);
          } else if (outcome.kind === "other" && activeFaults === 0 && Date.now() - lastFaultEnd > 30_000) {
            otherOutsideFaults++;
            log(`other failure outside a fault: ${o.name} user ${username}: ${outcome.message}`);
          }
        },
      }).start();
    }

    // The fault window: each fault at its planned offset (or at once, when the previous one overran).
    const windowStart = Date.now();
    for (const fault of faults) {
      const wait = windowStart + fault.atMs - Date.now();
      if (wait > 0) await sleep(wait, signal);
      if ((LEADER_FAULTS as readonly string[]).includes(fault.kind)) {
        await leaderFault(fault.kind as LeaderFault, fault.durationMs);
        continue;
      }
      if (fault.kind === "clock-step") {
        await clockStep(fault.stepS ?? -300, fault.durationMs);
        continue;
      }
      // The status-wipe is no outage: every login after it must still succeed.
      if (fault.kind === "status-wipe") {
        const o = managementOrder();
        await wipeStatus(o.cluster, { plural: "rabbitmqvhosts", namespace: o.key.namespace, name: o.name });
        outages["status-wipe"]++;
        faultSpans.push({ kind: "status-wipe", start: Date.now(), end: Date.now() + 1_000 });
        log(`status-wipe: the status of ${o.name} removed`);
        continue;
      }
      const kind = fault.kind as Exclude<Outage, "status-wipe">;
      const start = Date.now();
      activeFaults++;
      let stall: DeliveryStall | undefined;
      try {
        log(`${kind}: fault begins for ${(fault.durationMs / 1000).toFixed(1)}s`);
        if (kind === "endpoint") {
          withdrawn = true;
          await publishEndpoint(w, undefined);
        } else if (kind === "broker-unanswering") {
          managementProxy.hold();
        } else if (kind === "partition") {
          await managementProxy.stop();
        } else if (kind === "stalled-delivery") {
          const o = managementOrder();
          stall = await stallDelivery(o.cluster, o.key.namespace, deliveredSecretName(o.key));
          // The tenant rotates on demand, so that a successor is in flight during the stall; half-way
          // through, a piece of it is lost.
          const live = (await readOrderOf(o))?.status?.passwordGeneration ?? 1;
          await applyOrder(w, { namespace: o.key.namespace, on: "management" }, o.name, {
            ...orderSpec(o),
            passwordGeneration: live + 1,
          });
          void sleep(fault.durationMs / 2, signal)
            .then(() => deleteSuccessorUsers(w, o))
            .then((deleted) =>
              log(`stalled-delivery: ${o.name}: deleted ${deleted.join(", ") || "no"} successor User`),
            )
            .catch((error: unknown) =>
              log(`stalled-delivery: deleting a successor User failed: ${String(error)}`),
            );
        } else {
          stopped.add(kind);
          await localenv("stop", kind);
        }
        outages[kind]++;
        if (fault.killAtMs !== undefined) {
          await sleep(fault.killAtMs, signal);
          const killedAt = Date.now();
          await leaderFault("kill", 0);
          await sleep(Math.max(0, fault.durationMs - (Date.now() - killedAt) - fault.killAtMs), signal);
        } else {
          await sleep(fault.durationMs, signal);
        }
        if (kind === "endpoint") {
          await publishEndpoint(w, endpoint());
          withdrawn = false;
        } else if (stall) {
          await stall.release();
          stall = undefined;
        } else if (kind === "broker-unanswering") {
          managementProxy.unhold();
        } else if (kind === "partition") {
          await managementProxy.start();
        } else {
          await localenv("up");
          stopped.delete(kind);
        }
        log(`${kind}: restored`);
      } finally {
        await stall?.release();
        activeFaults--;
        lastFaultEnd = Date.now();
        faultSpans.push({ kind, start, end: lastFaultEnd });
      }
    }
    const remaining = windowStart + config.faultWindowMs - Date.now();
    if (remaining > 0) await sleep(remaining, signal);

    // Too few rotations or sweeps under way during a fault by chance: the leader is killed just before
    // the next one is due, a few times at most.
    for (let aimed = 0; aimed < 4; aimed++) {
      const seen = overlaps([...tracks.values()], faultSpans);
      const rotation = seen.rotation < config.minOverlaps.rotation;
      const sweep = seen.sweep < config.minOverlaps.sweep;
      if (!rotation && !sweep) break;
      const t = tracks.get(managementOrder().name);
      const due = (rotation ? t?.rotationDue : t?.sweepDue) ?? t?.rotationDue;
      if (due === undefined) break;
      log(`aimed fault: the leader killed just before the next ${rotation ? "rotation" : "sweep"} is due`);
      await sleep(Math.max(0, due - 1_000 - Date.now()), signal);
      await leaderFault("kill", 0);
      await sleep(20_000, signal);
    }
    log("fault window over; checking the orders");

    // Every order Ready on its live generation, the delivered Secret naming it, at most one superseded
    // user within its grace, and OpenBao holding exactly what was delivered. A restarted OpenBao gets
    // its backups back on the orders' next passes, so the checks are given time to converge.
    let last: string[] = [];
    const converged = await waitUntil("the orders to converge", 180_000, signal, async () => {
      last = [];
      for (const o of orders) last.push(...(await checkLive(w, o)));
      return last.length === 0;
    }).then(
      () => true,
      () => false,
    );
    if (!converged) failures.push(...last);

    const figures: OrderFigures[] = [];
    for (const o of orders) {
      const counts = (await o.prober?.stop()) ?? emptyCounts();
      o.prober = undefined;
      const generation = (await readOrderOf(o))?.status?.passwordGeneration ?? 0;
      figures.push({
        order: `${o.key.cluster || "management"}/${o.key.namespace}/${o.name}`,
        cluster: o.key.cluster || "management",
        generation,
        rotations: Math.max(0, generation - 1),
        prober: counts,
      });
    }

    // A Retain order's vhost keeps what its consumers left in it: a message is left in a durable queue.
    const retained = new Map<string, string>();
    for (const o of orders.filter((o) => o.retain)) {
      const secret = await readSecret(o.cluster, o.key.namespace, deliveredSecretName({ name: o.name }));
      retained.set(o.name, await retainMessage(secret?.data["transport_url"] ?? ""));
    }

    // Deletion: the operator tears every order down; nothing of theirs may stay behind.
    for (const o of orders) {
      await deleteOrder(
        w,
        { namespace: o.key.namespace, on: o.key.cluster ? "target" : "management" },
        o.name,
      );
    }
    const gone = await waitUntil("the orders to be torn down", 180_000, signal, async () => {
      for (const o of orders) if (await readOrderOf(o)) return false;
      return true;
    }).then(
      () => true,
      () => false,
    );
    if (!gone) {
      for (const o of orders) {
        const left = await readOrderOf(o).catch(() => undefined);
        if (!left) continue;
        const ready = left.status?.conditions?.find((c) => c.type === "Ready");
        const children = await checkGone(w, o).catch((e: unknown) => [String(e)]);
        failures.push(
          `${o.name}: not torn down within 180 s (Ready ${ready?.reason}: ${ready?.message}); ${children.join("; ")}`,
        );
      }
    } else {
      let leftovers: string[] = [];
      const clean = await waitUntil("nothing left behind", 60_000, signal, async () => {
        leftovers = [];
        for (const o of orders) leftovers.push(...(await checkGone(w, o)));
        return leftovers.length === 0;
      }).then(
        () => true,
        () => false,
      );
      if (!clean) failures.push(...leftovers);
      for (const o of orders.filter((o) => o.retain)) {
        const problem = await checkRetained(w, vhostName(o.key), retained.get(o.name) ?? "");
        if (problem) failures.push(`${o.name}: ${problem}`);
      }
    }

    const rotations = figures.reduce((n, f) => n + f.rotations, 0);
    const sum = (pick: (c: ProberCounts) => number) => figures.reduce((n, f) => n + pick(f.prober), 0);
    const logins = {
      ok: sum((c) => c.successes),
      authFailed: sum((c) => c.authFailures),
      other: sum((c) => c.otherFailures),
      otherOutsideFaults,
    };
    if (logins.authFailed > 0) failures.push(`${logins.authFailed} logins refused by the broker`);
    if (logins.ok === 0) failures.push("no login succeeded");
    if (otherOutsideFaults > 0)
      failures.push(`${otherOutsideFaults} failed probes outside a fault and the 30 s after it`);
    if (rotations < config.minRotations)
      failures.push(`${rotations} rotations, fewer than ${config.minRotations}`);
    const leaderFaultCount = Object.values(leaderFaults).reduce((a, b) => a + b, 0);
    if (leaderFaultCount < config.minLeaderFaults)
      failures.push(`${leaderFaultCount} leader faults, fewer than ${config.minLeaderFaults}`);
    for (const kind of LEADER_FAULTS) {
      if (leaderFaults[kind] < config.leaderFaults[kind])
        failures.push(
          `${leaderFaults[kind]} leader ${kind} faults, fewer than the ${config.leaderFaults[kind]} planned`,
        );
    }
    for (const [kind, n] of Object.entries(config.outages)) {
      const done = outages[kind as Outage];
      if ((kind === "endpoint" || kind === "target-apiserver") && config.targetOrders === 0) continue;
      if (done < n) failures.push(`${done} ${kind} outages, fewer than the ${n} planned`);
    }
    const seen = overlaps([...tracks.values()], faultSpans);
    if (seen.rotation < config.minOverlaps.rotation)
      failures.push(
        `${seen.rotation} rotations under way during a fault, fewer than ${config.minOverlaps.rotation}`,
      );
    if (seen.sweep < config.minOverlaps.sweep)
      failures.push(`${seen.sweep} sweeps under way during a fault, fewer than ${config.minOverlaps.sweep}`);
    if (mostLeaders > 1) failures.push(`${mostLeaders} replicas led at once`);
    // A grace whose predecessor was swept sooner than the grace after its successor went live, where
    // it met a clock-step or the minute after it: the status's deadlines are wall-clock times, so a
    // step of the leader's clock moves them (docs/reliability.md). Reported, not a failed check.
    const graceMs = parseDuration(config.grace) ?? 0;
    const stepSpans = faultSpans
      .filter((f) => f.kind === "clock-step")
      .map((f) => ({ ...f, end: f.end + 60_000 }));
    const shortGraces = graces
      .filter((g) => g.end - g.start < graceMs - 3_000)
      .filter((g) => stepSpans.some((f) => g.start <= f.end && f.start <= g.end))
      .map(
        (g) =>
          `${g.order}: ${((g.end - g.start) / 1000).toFixed(0)} s of ${config.grace}, ` +
          `live ${new Date(g.start).toISOString()}, swept by ${new Date(g.end).toISOString()}`,
      );
    const kept: Omit<ChaosConfig, "log" | "signal"> = { ...config };
    delete (kept as ChaosConfig).log;
    delete (kept as ChaosConfig).signal;
    return {
      seed: config.seed,
      config: kept,
      rotations,
      leaderFaults,
      outages,
      overlaps: seen,
      replicas: { ownExits: replicas.ownExits, mostLeaders },
      clockSteps,
      shortGraces,
      logins,
      durationMs: Date.now() - started,
      orders: figures,
      failures,
      authFailures,
      workdir,
      operatorLog,
    };
  } finally {
    // Whatever happened: probers stopped, every stopped part started again, the endpoint published,
    // the world removed while the replicas still run, then the replicas stopped by their pids.
    for (const o of orders) await o.prober?.stop().catch(() => undefined);
    if (stopped.size > 0) {
      log(`restoring ${[...stopped].join(", ")}`);
      await localenv("up").catch((e: unknown) => log(`localenv up failed: ${String(e)}`));
    }
    try {
      if (world && withdrawn) await publishEndpoint(world, endpoint()).catch(() => undefined);
      managementProxy?.unhold();
      await managementProxy?.start();
      if (world) await replicas.keep().catch((e: unknown) => log(String(e)));
      watch.abort();
      await watching;
      await destroyTargetWorld(world, 120_000).catch((e: unknown) => log(`clean-up: ${String(e)}`));
      if (world) for (const o of orders) if (o.retain) await deleteBrokerVhost(world, vhostName(o.key));
    } finally {
      watch.abort();
      await replicas.stopBoth();
      await managementProxy?.stop();
      releaseOperatorLock();
      log("done");
    }
  }

  function readOrderOf(o: ChaosOrder): Promise<RabbitMQVhost | undefined> {
    return readOrder(o.cluster, o.key.namespace, o.name);
  }

  async function checkLive(w: TargetWorld, o: ChaosOrder): Promise<string[]> {
    const problems: string[] = [];
    const order = await readOrderOf(o);
    const status = order?.status;
    const ready = status?.conditions?.find((c) => c.type === "Ready");
    if (ready?.status !== "True") {
      problems.push(`${o.name}: not Ready (${ready?.reason ?? "no condition"}: ${ready?.message ?? ""})`);
      return problems;
    }
    const generation = status?.passwordGeneration ?? 0;
    const live = userName(o.key, generation);
    const delivered = await readSecret(o.cluster, o.key.namespace, deliveredSecretName({ name: o.name }));
    if (delivered?.data["username"] !== live) {
      problems.push(`${o.name}: the delivered Secret names ${delivered?.data["username"]}, not ${live}`);
    }
    const users = await brokerUsers(w, `${vhostName(o.key)}-v`);
    if (!users.includes(live)) problems.push(`${o.name}: the live user ${live} is not on the broker`);
    const others = users.filter((u) => u !== live);
    const previous = status?.previousPasswordGeneration;
    const deleteAt = Date.parse(status?.previousPasswordDeleteAt ?? "");
    const allowed = previous ? userName(o.key, previous) : undefined;
    for (const user of others) {
      if (user !== allowed) problems.push(`${o.name}: broker user ${user} is neither live nor in its grace`);
      // The sweep is due at deleteAt (a requeue with a 10 s floor): well past it, the user leaked.
      else if (!(deleteAt > Date.now() - 30_000)) {
        problems.push(
          `${o.name}: broker user ${user} outlived its grace (deleteAt ${status?.previousPasswordDeleteAt})`,
        );
      }
    }
    const backup = await openBaoRead(backupPath(RABBITMQ_NAMING, o.key, w.cpNs)).catch((e: unknown) =>
      String(e),
    );
    if (!delivered || !isDeepStrictEqual(backup, delivered.data)) {
      const found = typeof backup === "string" ? backup : backup?.["username"];
      problems.push(`${o.name}: OpenBao does not hold the live credential (it holds ${found ?? "nothing"})`);
    }
    return problems;
  }

  async function checkGone(w: TargetWorld, o: ChaosOrder): Promise<string[]> {
    const problems: string[] = [];
    const selector = childSelector(RABBITMQ_NAMING, o.key);
    const custom = w.management.config.makeApiClient(k8s.CustomObjectsApi);
    for (const plural of ["vhosts", "users", "permissions"]) {
      const list = (await custom.listNamespacedCustomObject({
        group: "rabbitmq.com",
        version: "v1beta1",
        plural,
        namespace: w.cpNs,
        labelSelector: selector,
      })) as { items: k8s.KubernetesObject[] };
      for (const item of list.items) problems.push(`${o.name}: orphaned ${plural} ${item.metadata?.name}`);
    }
    const secrets = await w.management.core.listNamespacedSecret({
      namespace: w.cpNs,
      labelSelector: selector,
    });
    for (const item of secrets.items) problems.push(`${o.name}: orphaned Secret ${item.metadata?.name}`);
    if (await readSecret(o.cluster, o.key.namespace, deliveredSecretName({ name: o.name }))) {
      problems.push(`${o.name}: the delivered Secret is left`);
    }
    for (const user of await brokerUsers(w, `${vhostName(o.key)}-v`)) {
      problems.push(`${o.name}: broker user ${user} is left`);
    }
    const vhost = await brokerApi(w, "GET", `/api/vhosts/${encodeURIComponent(vhostName(o.key))}`);
    await vhost.arrayBuffer();
    if (o.retain && vhost.status !== 200)
      problems.push(`${o.name}: Retain, but the vhost is gone (${vhost.status})`);
    if (!o.retain && vhost.status !== 404) problems.push(`${o.name}: the vhost is left (${vhost.status})`);
    if (await openBaoRead(backupPath(RABBITMQ_NAMING, o.key, w.cpNs)))
      problems.push(`${o.name}: the OpenBao backup is left`);
    return problems;
  }
}

/** Deletes the User CRs of generations above the one the order's status names: a lost successor piece. */
async function deleteSuccessorUsers(w: TargetWorld, o: ChaosOrder): Promise<string[]> {
  const live = (await readOrder(o.cluster, o.key.namespace, o.name))?.status?.passwordGeneration;
  const custom = w.management.config.makeApiClient(k8s.CustomObjectsApi);
  const users = (await custom.listNamespacedCustomObject({
    group: "rabbitmq.com",
    version: "v1beta1",
    plural: "users",
    namespace: w.cpNs,
    labelSelector: childSelector(RABBITMQ_NAMING, o.key),
  })) as { items: { metadata: { name: string } }[] };
  const deleted: string[] = [];
  for (const u of users.items) {
    const generation = Number(/-v([0-9]+)$/.exec(u.metadata.name)?.[1] ?? 0);
    if (live === undefined || generation <= live) continue;
    await custom.deleteNamespacedCustomObject({
      group: "rabbitmq.com",
      version: "v1beta1",
      plural: "users",
      namespace: w.cpNs,
      name: u.metadata.name,
    });
    deleted.push(u.metadata.name);
  }
  return deleted;
}

async function brokerUsers(w: TargetWorld, prefix: string): Promise<string[]> {
  const res = await brokerApi(w, "GET", "/api/users");
  if (!res.ok) throw new Error(`GET /api/users: HTTP ${res.status}`);
  const users = (await res.json()) as { name: string }[];
  return users.map((u) => u.name).filter((n) => n.startsWith(prefix));
}

async function deleteBrokerVhost(w: TargetWorld, vhost: string): Promise<void> {
  await (
    await brokerApi(w, "DELETE", `/api/vhosts/${encodeURIComponent(vhost)}`)
  )
    .arrayBuffer()
    .catch(() => undefined);
}

function isReady(o: RabbitMQVhost | undefined): boolean {
  return o?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
}

/** Polls `check` (errors count as not yet) until it holds, or throws after `timeoutMs`. */
async function waitUntil(
  what: string,
  timeoutMs: number,
  signal: AbortSignal | undefined,
  check: () => Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      if (await check()) return;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`, { cause: lastError });
    await sleep(1_000, signal);
  }
}
