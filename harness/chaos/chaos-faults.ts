// The faults of a chaos run (chaos.ts): the leader killed, frozen or stopped; its wall clock stepped;
// an order's status wiped; an outage (a part of the environment stopped, the broker's management API
// unanswering or cut off, the published endpoint withdrawn, a delivery stalled while a successor's User
// is lost); the broker of the management-cluster orders restarted empty; an order's live User lost during
// a grace; and the faults aimed at the next rotation or sweep when too few met one by chance. Each records
// its span and count in the run (chaos-run.ts). The bus change is chaos-bus.ts's; the broker-specific
// faults here act on the bus the management-cluster orders are on at the time (`run.bus`).
import * as k8s from "@kubernetes/client-node";
import { childSelector, deliveredSecretName } from "../../src/orders/core/naming.ts";
import { RABBITMQ_NAMING, userChildName, userName, vhostName } from "../../src/orders/rabbitmq/naming.ts";
import type { LeaderFault, Outage, PlannedFault } from "./chaos-plan.ts";
import { overlaps } from "./chaos-overlap.ts";
import {
  isReady,
  onBus,
  sleep,
  waitUntil,
  type ChaosOrder,
  type ChaosRun,
  type EmptiedWindow,
} from "./chaos-run.ts";
import { resetBroker } from "../world/emptied-broker.ts";
import { stallDelivery, wipeStatus, type DeliveryStall } from "./order-faults.ts";
import {
  applyOrder,
  brokerApi,
  publishEndpoint,
  readOrder,
  readSecret,
  type TargetWorld,
} from "../world/target-cluster.ts";
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
 * How long after an emptied broker is back every order's delivered user, its vhost and its permission
 * must be on it again: the operator's broker check runs every 15 s (--topology-broker-check-interval),
 * then every object is declared at once (docs/topology.md, step 7). A refusal later fails the run.
 */
export const EMPTIED_BROKER_BOUND_MS = 60_000;

/**
 * The broker of the management-cluster orders (`run.bus`: the local environment's first, or the second
 * after a bus change) restarted empty, as a lost volume or a `force_reset` leaves it: its node reset, its
 * administrator made again as `scripts/localenv.sh up` makes it. It is an outage for the consumers on it:
 * their logins are refused until the operator has declared their vhost, user and permission again. Its window (and span) lasts from the reset until the broker holds every order's
 * delivered user with its permission on the order's vhost again, at most EMPTIED_BROKER_BOUND_MS after it
 * came back; a refusal inside it is expected and counted apart, one after it fails the run as any other.
 */
export async function emptiedBroker(run: ChaosRun, w: TargetWorld): Promise<void> {
  const { log, signal } = run;
  const start = Date.now();
  const window: EmptiedWindow = { start, refusals: 0 };
  const bus = run.bus;
  run.activeFaults++;
  run.emptiedWindows.push(window);
  try {
    log(
      `emptied-broker: the broker of ${bus.name} (${bus.part}) reset (stop_app, force_reset, start_app), its administrator made again`,
    );
    // A reset that fails half-way leaves the broker to the run's final `up` (which makes the administrator).
    run.stopped.add(bus.part);
    await resetBroker(bus.node);
    run.stopped.delete(bus.part);
    run.outages["emptied-broker"]++;
    const back = Date.now();
    log(`emptied-broker: the broker back empty after ${((back - start) / 1000).toFixed(1)}s`);
    let missing: string[] = [];
    for (;;) {
      missing = await missingDelivered(run, w);
      if (missing.length === 0) {
        window.recoveredMs = Date.now() - back;
        break;
      }
      if (Date.now() - back > EMPTIED_BROKER_BOUND_MS) break;
      await sleep(500, signal);
    }
    window.end = Date.now();
    if (window.recoveredMs === undefined) {
      const problem = `emptied-broker: not back on the broker ${EMPTIED_BROKER_BOUND_MS / 1000} s after it came back empty: ${missing.join(", ")}`;
      run.failures.push(problem);
      log(`EMPTIED-BROKER ${problem}`);
    } else {
      log(
        `emptied-broker: every delivered user back on the broker ${(window.recoveredMs / 1000).toFixed(1)}s ` +
          `after it came back empty; ${window.refusals} logins refused meanwhile`,
      );
    }
  } finally {
    window.end ??= Date.now();
    run.activeFaults--;
    run.lastFaultEnd = Date.now();
    run.faultSpans.push({ kind: "emptied-broker", start, end: run.lastFaultEnd });
  }
}

/** The orders whose delivered user lacks, on its broker, itself, the order's vhost or its permission there. */
async function missingDelivered(run: ChaosRun, w: TargetWorld): Promise<string[]> {
  const missing: string[] = [];
  for (const o of run.orders) {
    const secret = await readSecret(o.cluster, o.key.namespace, deliveredSecretName({ name: o.name })).catch(
      () => undefined,
    );
    const user = secret?.data["username"];
    if (!user) {
      missing.push(`${o.name} (its delivered Secret unread)`);
      continue;
    }
    // 200 only when the vhost, the user and the permission are all there.
    const path = `/api/permissions/${encodeURIComponent(vhostName(o.key))}/${encodeURIComponent(user)}`;
    const res = await brokerApi(onBus(w, run.busOf(o)), "GET", path).catch(() => undefined);
    await res?.arrayBuffer().catch(() => undefined);
    if (res?.status !== 200) missing.push(`${o.name}'s ${user} (${res?.status ?? "no answer"})`);
  }
  return missing;
}

/** A grace left shorter than this is not waited into: the loss must fall inside it. */
const GRACE_LEFT_MS = 8_000;
/** How long after the grace ends a lost live User's successor must be delivered (faults may follow). */
const LOST_USER_REPLACED_MS = 180_000;

/** The order's live generation and when its predecessor's grace ends, while it has enough of it left. */
async function inGrace(
  run: ChaosRun,
  o: ChaosOrder,
): Promise<{ o: ChaosOrder; generation: number; deleteAt: number } | undefined> {
  const order = await run.readOrderOf(o).catch(() => undefined);
  const status = order?.status;
  const deleteAt = Date.parse(status?.previousPasswordDeleteAt ?? "");
  const generation = status?.passwordGeneration;
  if (!isReady(order) || status?.previousPasswordGeneration === undefined || generation === undefined)
    return undefined;
  return deleteAt - Date.now() >= GRACE_LEFT_MS ? { o, generation, deleteAt } : undefined;
}

/**
 * During an order's grace period (its predecessor's user still on the broker), the live generation's
 * User child loses its finalizer and is deleted, as a tenant or a restore can do; the leader is frozen
 * (SIGSTOP, well inside its Lease) for the strip and the deletion, so that its next pass cannot put the
 * finalizer back in between. The broker user stays, the only thing the consumers log in with: the
 * operator must keep it (no refusal at all: this is no outage) and deliver a successor after the grace
 * (docs/orders.md, "Stray accounts"), which a check following the fault waits for. An order in its grace
 * is taken if one is; otherwise one is rotated on demand (its generation raised, as its tenant can).
 */
export async function lostLiveUser(run: ChaosRun, w: TargetWorld): Promise<void> {
  const { log, signal } = run;
  const start = Date.now();
  let target: Awaited<ReturnType<typeof inGrace>>;
  for (const o of run.orders) target ??= await inGrace(run, o);
  if (!target) {
    const o = run.orders[(run.config.seed + run.outages["lost-live-user"]) % run.orders.length];
    if (!o) return;
    const live = (await run.readOrderOf(o))?.status?.passwordGeneration ?? 1;
    log(`lost-live-user: no order in a grace period; ${o.name} rotated on demand to generation ${live + 1}`);
    await applyOrder(w, { namespace: o.key.namespace, on: o.key.cluster ? "target" : "management" }, o.name, {
      ...run.orderSpec(o),
      passwordGeneration: live + 1,
    });
    await waitUntil(`${o.name} in a grace period`, 60_000, signal, async () => {
      target = await inGrace(run, o);
      return target !== undefined && target.generation > live;
    }).catch(() => undefined);
  }
  if (!target) {
    log("lost-live-user: no order in a grace period within 60 s; no User deleted");
    return;
  }
  const { o, generation, deleteAt } = target;
  const ref = {
    group: "rabbitmq.com",
    version: "v1beta1",
    plural: "users",
    namespace: w.cpNs,
    name: userChildName(o.key, generation),
  };
  const custom = w.management.config.makeApiClient(k8s.CustomObjectsApi);
  const leader = await run.replicas.leading();
  const frozenAt = Date.now();
  leader.pause();
  try {
    await custom.patchNamespacedCustomObject(
      { ...ref, body: { metadata: { finalizers: null } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
    await custom.deleteNamespacedCustomObject(ref);
  } finally {
    leader.resume();
  }
  const frozenMs = Date.now() - frozenAt;
  run.outages["lost-live-user"]++;
  run.faultSpans.push({ kind: "lost-live-user", start, end: Date.now() + 1_000 });
  log(
    `lost-live-user: ${o.name}: the User ${ref.name} of its live generation ${generation} deleted, its ` +
      `finalizer stripped, ${((deleteAt - Date.now()) / 1000).toFixed(0)}s before its predecessor's grace ` +
      `ends; the leader (pid ${leader.pid}) frozen for ${frozenMs} ms`,
  );
  // A freeze past the renew deadline would be a pause fault, not this one.
  if (frozenMs > 10_000)
    run.failures.push(`lost-live-user: the leader was frozen ${frozenMs} ms, not a moment`);
  const entry: (typeof run.lostLiveUsers)[number] = { order: o.name, generation, replacedMs: undefined };
  run.lostLiveUsers.push(entry);
  run.pending.push(followLostUser(run, w, o, entry, deleteAt, frozenAt));
}

/**
 * After a lost live User: while the delivered Secret names it, the broker must hold its user (unless an
 * emptied broker lost it since: no User declares it again); a successor must be delivered within
 * LOST_USER_REPLACED_MS of the grace's end.
 */
async function followLostUser(
  run: ChaosRun,
  w: TargetWorld,
  o: ChaosOrder,
  entry: ChaosRun["lostLiveUsers"][number],
  deleteAt: number,
  lostAt: number,
): Promise<void> {
  const lost = userName(o.key, entry.generation);
  const deadline = Math.max(deleteAt, Date.now()) + LOST_USER_REPLACED_MS;
  let problem: string | undefined;
  let missingFor = 0;
  while (!run.finished && !run.signal?.aborted) {
    const status = (await run.readOrderOf(o).catch(() => undefined))?.status;
    const secret = await readSecret(o.cluster, o.key.namespace, deliveredSecretName({ name: o.name })).catch(
      () => undefined,
    );
    const delivered = secret?.data["username"];
    if ((status?.passwordGeneration ?? 0) > entry.generation && delivered && delivered !== lost) {
      entry.replacedMs = Date.now() - lostAt;
      run.log(
        `lost-live-user: ${o.name}: ${delivered} delivered in place of ${lost}, ${(entry.replacedMs / 1000).toFixed(0)}s after the loss`,
      );
      return;
    }
    // The broker's management API answers 404 for a while as the broker stops: only a user missing
    // three seconds in a row with no fault under way counts.
    if (delivered === lost && run.activeFaults === 0 && !run.emptiedWindows.some((e) => e.start > lostAt)) {
      const path = `/api/users/${encodeURIComponent(lost)}`;
      const res = await brokerApi(onBus(w, run.busOf(o)), "GET", path).catch(() => undefined);
      await res?.arrayBuffer().catch(() => undefined);
      missingFor = res?.status === 404 && run.activeFaults === 0 ? missingFor + 1 : 0;
      if (missingFor >= 3) {
        problem = `the delivered user ${lost} was removed from the broker while delivered`;
        break;
      }
    } else {
      missingFor = 0;
    }
    if (Date.now() > deadline) {
      problem = `no successor of ${lost} delivered within ${LOST_USER_REPLACED_MS / 1000} s of the grace's end`;
      break;
    }
    await sleep(1_000, run.signal).catch(() => undefined);
  }
  if (problem) {
    run.failures.push(`lost-live-user: ${o.name}: ${problem}`);
    run.log(`LOST-LIVE-USER ${o.name}: ${problem}`);
  }
}

/**
 * An outage for the fault's duration, then the part restored; the leader killed part-way through where
 * the plan says so.
 */
export async function outage(run: ChaosRun, w: TargetWorld, fault: PlannedFault): Promise<void> {
  const { signal, log } = run;
  // The broker's faults hit the bus the management-cluster orders are on now (faults come one after the
  // other: none falls into a bus change).
  const bus = run.bus;
  const managementProxy = bus.proxy;
  const kind = fault.kind as Exclude<
    Outage,
    "status-wipe" | "emptied-broker" | "lost-live-user" | "bus-change"
  >;
  const part = kind === "rabbitmq" ? bus.part : kind;
  const start = Date.now();
  run.activeFaults++;
  let stall: DeliveryStall | undefined;
  try {
    log(
      `${kind}: fault begins for ${(fault.durationMs / 1000).toFixed(1)}s` +
        (kind === "rabbitmq" || kind === "partition" || kind === "broker-unanswering"
          ? ` on ${bus.name}`
          : ""),
    );
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
      run.stopped.add(part);
      await run.localenv("stop", part);
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
      run.stopped.delete(part);
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
