// The faults of a chaos run (chaos.ts): the leader killed, frozen or stopped; its wall clock stepped;
// an order's status wiped; an outage (a part of the environment stopped, the broker's management API
// unanswering or cut off, the published endpoint withdrawn, a delivery stalled while a successor's User
// is lost); and the faults aimed at the next rotation or sweep when too few met one by chance. Each
// records its span and count in the run (chaos-run.ts).
import * as k8s from "@kubernetes/client-node";
import { childSelector, deliveredSecretName } from "../../src/orders/core/naming.ts";
import { RABBITMQ_NAMING } from "../../src/orders/rabbitmq/naming.ts";
import type { LeaderFault, Outage, PlannedFault } from "./chaos-plan.ts";
import { overlaps } from "./chaos-overlap.ts";
import { sleep, waitUntil, type ChaosOrder, type ChaosRun } from "./chaos-run.ts";
import { stallDelivery, wipeStatus, type DeliveryStall } from "./order-faults.ts";
import { applyOrder, publishEndpoint, readOrder, type TargetWorld } from "./target-cluster.ts";
import { stepWallClock } from "./wall-clock.ts";

/**
 * A fault of the leader, its span from the fault until a replica leads again: kill (SIGKILL, then its
 * slot restarts after `durationMs`), pause (SIGSTOP for `durationMs`, then SIGCONT: the thawed process
 * must exit by itself), term (SIGTERM: it drains and exits by itself within the chart's grace period).
 */
export async function leaderFault(run: ChaosRun, kind: LeaderFault, durationMs: number): Promise<void> {
  const { replicas, signal, failures } = run;
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
      else if (leader.exitCode !== 1) failures.push(`a thawed leader exited with ${leader.exitCode}, not 1`);
    } else {
      const code = await leader.stop(150_000);
      if (code !== 0) failures.push(`a leader stopped with SIGTERM exited with ${code}, not 0`);
    }
  });
  run.leaderFaults[kind]++;
  await replicas.leader();
  run.faultSpans.push({ kind, start, end: Date.now() });
}

/** The Lease's holder and how far its renewTime is off the real clock (ms; negative: behind). */
async function readLease(run: ChaosRun): Promise<{ holder: string; skewMs: number } | undefined> {
  if (!run.world) return undefined;
  const lease = await run.world.management.config
    .makeApiClient(k8s.CoordinationV1Api)
    .readNamespacedLease({ name: run.leaseName, namespace: "default" });
  const renew = lease.spec?.renewTime;
  const renewMs = renew instanceof Date ? renew.getTime() : Date.parse(String(renew ?? ""));
  return { holder: lease.spec?.holderIdentity ?? "", skewMs: renewMs - Date.now() };
}

/** Each order's schedule as the status stamps it, against the real clock. */
async function schedule(run: ChaosRun): Promise<string> {
  const parts: string[] = [];
  for (const o of run.orders) {
    const status = (await run.readOrderOf(o).catch(() => undefined))?.status;
    const off = (t: string | undefined) => (t ? `${((Date.parse(t) - Date.now()) / 1000).toFixed(0)}s` : "-");
    parts.push(
      `${o.name} gen ${status?.passwordGeneration ?? "?"} nextRotation ${off(status?.nextRotation)}` +
        ` previous ${status?.previousPasswordGeneration ?? "-"} deleteAt ${off(status?.previousPasswordDeleteAt)}`,
    );
  }
  return parts.join("; ");
}

/**
 * The leader's wall clock `seconds` off for `durationMs`, then back; its span from the step until the
 * clock is back and the leader seen leading after it. The leader must lead throughout (its process
 * running, its metric saying so, the Lease naming it), and the Lease's renewTime must show the step.
 */
export async function clockStep(run: ChaosRun, seconds: number, durationMs: number): Promise<void> {
  const { replicas, signal, log } = run;
  const slot = await replicas.leader();
  const leader = replicas.processOf(slot);
  const before = await readLease(run).catch(() => undefined);
  const file = run.offsetFile(slot);
  const start = Date.now();
  const problems: string[] = [];
  let skewMs: number | undefined;
  const what = `a wall-clock step of ${seconds > 0 ? "+" : ""}${seconds} s`;
  const stillLeads = async (when: string) => {
    const lease = await readLease(run).catch(() => undefined);
    if (replicas.processOf(slot) !== leader) problems.push(`the leader ended ${when} ${what}`);
    else if (!(await leader?.leading())) problems.push(`the leader stopped leading ${when} ${what}`);
    else if (lease && before && lease.holder !== before.holder)
      problems.push(`the Lease moved from ${before.holder} to ${lease.holder} ${when} ${what}`);
    return lease;
  };
  run.activeFaults++;
  try {
    log(
      `clock-step: the leader, replica ${slot} pid ${leader?.pid}: wall clock ${seconds > 0 ? "+" : ""}${seconds} s ` +
        `for ${(durationMs / 1000).toFixed(1)}s; schedule: ${await schedule(run)}`,
    );
    stepWallClock(file, seconds);
    while (Date.now() - start < durationMs && problems.length === 0) {
      await sleep(1_000, signal);
      const lease = await stillLeads("during");
      // The renewTime the leader wrote last, the furthest off (a renewal every 2 s).
      if (lease && (skewMs === undefined || Math.abs(lease.skewMs) > Math.abs(skewMs))) skewMs = lease.skewMs;
    }
    log(
      `clock-step: ${what} ends; renewTime seen ${((skewMs ?? 0) / 1000).toFixed(1)}s off; schedule: ${await schedule(run)}`,
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
    run.failures.push(...problems);
    for (const p of problems) log(`CLOCK-STEP ${p}`);
    run.clockSteps.push({ seconds, leaseSkewMs: skewMs, keptLease });
    run.outages["clock-step"]++;
    log(
      `clock-step: restored; the leader ${keptLease ? "kept" : "did NOT keep"} its Lease; schedule: ${await schedule(run)}`,
    );
  } finally {
    run.activeFaults--;
    run.lastFaultEnd = Date.now();
    run.faultSpans.push({ kind: "clock-step", start, end: run.lastFaultEnd });
  }
}

/** The status-wipe is no outage: every login after it must still succeed. */
export async function statusWipe(run: ChaosRun): Promise<void> {
  const o = run.managementOrder();
  await wipeStatus(o.cluster, { plural: "rabbitmqvhosts", namespace: o.key.namespace, name: o.name });
  run.outages["status-wipe"]++;
  run.faultSpans.push({ kind: "status-wipe", start: Date.now(), end: Date.now() + 1_000 });
  run.log(`status-wipe: the status of ${o.name} removed`);
}

/**
 * An outage for the fault's duration, then the part restored; the leader killed part-way through where
 * the plan says so.
 */
export async function outage(run: ChaosRun, w: TargetWorld, fault: PlannedFault): Promise<void> {
  const { signal, log } = run;
  const managementProxy = run.managementProxy;
  if (!managementProxy) throw new Error("an outage needs the run's management proxy");
  const kind = fault.kind as Exclude<Outage, "status-wipe">;
  const start = Date.now();
  run.activeFaults++;
  let stall: DeliveryStall | undefined;
  try {
    log(`${kind}: fault begins for ${(fault.durationMs / 1000).toFixed(1)}s`);
    if (kind === "endpoint") {
      run.withdrawn = true;
      await publishEndpoint(w, undefined);
    } else if (kind === "broker-unanswering") {
      managementProxy.hold();
    } else if (kind === "partition") {
      await managementProxy.stop();
    } else if (kind === "stalled-delivery") {
      const o = run.managementOrder();
      stall = await stallDelivery(o.cluster, o.key.namespace, deliveredSecretName(o.key));
      // The tenant rotates on demand, so that a successor is in flight during the stall; half-way
      // through, a piece of it is lost.
      const live = (await run.readOrderOf(o))?.status?.passwordGeneration ?? 1;
      await applyOrder(w, { namespace: o.key.namespace, on: "management" }, o.name, {
        ...run.orderSpec(o),
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
      run.stopped.add(kind);
      await run.localenv("stop", kind);
    }
    run.outages[kind]++;
    if (fault.killAtMs !== undefined) {
      await sleep(fault.killAtMs, signal);
      const killedAt = Date.now();
      await leaderFault(run, "kill", 0);
      await sleep(Math.max(0, fault.durationMs - (Date.now() - killedAt) - fault.killAtMs), signal);
    } else {
      await sleep(fault.durationMs, signal);
    }
    if (kind === "endpoint") {
      await publishEndpoint(w, run.endpoint());
      run.withdrawn = false;
    } else if (stall) {
      await stall.release();
      stall = undefined;
    } else if (kind === "broker-unanswering") {
      managementProxy.unhold();
    } else if (kind === "partition") {
      await managementProxy.start();
    } else {
      await run.localenv("up");
      run.stopped.delete(kind);
    }
    log(`${kind}: restored`);
  } finally {
    await stall?.release();
    run.activeFaults--;
    run.lastFaultEnd = Date.now();
    run.faultSpans.push({ kind, start, end: run.lastFaultEnd });
  }
}

/**
 * Too few rotations or sweeps under way during a fault by chance: the leader is killed just before the
 * next one is due, a few times at most.
 */
export async function aimFaults(run: ChaosRun): Promise<void> {
  const { config, signal } = run;
  for (let aimed = 0; aimed < 4; aimed++) {
    const seen = overlaps([...run.tracks.values()], run.faultSpans);
    const rotation = seen.rotation < config.minOverlaps.rotation;
    const sweep = seen.sweep < config.minOverlaps.sweep;
    if (!rotation && !sweep) break;
    const t = run.tracks.get(run.managementOrder().name);
    const due = (rotation ? t?.rotationDue : t?.sweepDue) ?? t?.rotationDue;
    if (due === undefined) break;
    run.log(`aimed fault: the leader killed just before the next ${rotation ? "rotation" : "sweep"} is due`);
    await sleep(Math.max(0, due - 1_000 - Date.now()), signal);
    await leaderFault(run, "kill", 0);
    await sleep(20_000, signal);
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
