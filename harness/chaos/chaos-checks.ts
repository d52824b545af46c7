// The tracking and the checks of a chaos run (chaos.ts): the watch that keeps two replicas, counts the
// leaders and follows each order's rotations and sweeps while the faults run (chaos-faults.ts); then the
// promise checked: every order converged on its live credential on the bus it is on, nothing left on
// any bus after deletion, a Retain order's vhost still holding its message, and the run's figures against
// its configuration.
import { isDeepStrictEqual } from "node:util";
import * as k8s from "@kubernetes/client-node";
import { backupPath, childSelector, deliveredSecretName } from "../../src/orders/core/naming.ts";
import { RABBITMQ_NAMING, userName, vhostName } from "../../src/orders/rabbitmq/naming.ts";
import { parseDuration } from "../../src/runtime/base/duration.ts";
import type { ProberCounts } from "../probes/login-prober.ts";
import { LEADER_FAULTS, type Outage } from "./chaos-plan.ts";
import type { ChaosReport, OrderFigures } from "./chaos-report.ts";
import { overlaps } from "./chaos-overlap.ts";
import { onBus, sleep, waitUntil, type ChaosOrder, type ChaosRun } from "./chaos-run.ts";
import { checkRetained } from "./retained-message.ts";
import { openBaoRead } from "../world/order-env.ts";
import { brokerApi, readSecret, type TargetWorld } from "../world/target-cluster.ts";

/**
 * The two replicas stay two: one that ends by itself (its Lease lapsed during an etcd outage) starts
 * again; never two lead at once; and each order's status is followed.
 */
export class RunWatch {
  readonly #run: ChaosRun;
  readonly #abort = new AbortController();
  #watching: Promise<void> | undefined;

  constructor(run: ChaosRun) {
    this.#run = run;
  }

  start(): void {
    const run = this.#run;
    const signal = this.#abort.signal;
    this.#watching = (async () => {
      while (!signal.aborted) {
        await run.replicas
          .keep()
          .catch((e: unknown) => run.log(`starting a replica again failed: ${String(e)}`));
        run.mostLeaders = Math.max(run.mostLeaders, await run.replicas.leaders());
        for (const o of run.orders) await track(run, o).catch(() => undefined);
        await sleep(1_000, signal).catch(() => undefined);
      }
    })();
  }

  /** Stops watching; resolves once the watch has ended. */
  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#watching;
  }

  abort(): void {
    this.#abort.abort();
  }
}

/** Follows an order's status: when a rotation or a sweep completes, and since when it was due. */
async function track(run: ChaosRun, o: ChaosOrder): Promise<void> {
  const status = (await run.readOrderOf(o))?.status;
  if (!status) return;
  const t = run.tracks.get(o.name) ?? { rotations: [], sweeps: [] };
  run.tracks.set(o.name, t);
  const now = Date.now();
  const generation = status.passwordGeneration ?? 0;
  if (t.generation !== undefined && generation > t.generation) {
    t.rotations.push({ kind: "rotation", start: Math.min(t.rotationDue ?? now, now), end: now });
  }
  // The live generation never goes back (a wiped status reads none until it is rebuilt).
  if (t.generation !== undefined && status.passwordGeneration !== undefined && generation < t.generation) {
    run.failures.push(`${o.name}: the live generation went back from ${t.generation} to ${generation}`);
    run.log(`GENERATION BACK ${o.name}: ${t.generation} -> ${generation}`);
  }
  if (t.previous !== undefined && status.previousPasswordGeneration === undefined) {
    t.sweeps.push({ kind: "sweep", start: Math.min(t.sweepDue ?? now, now), end: now });
    const since = t.rotations.at(-1)?.end;
    if (since !== undefined) run.graces.push({ kind: "grace", order: o.name, start: since, end: now });
  }
  t.generation = generation;
  t.previous = status.previousPasswordGeneration;
  t.rotationDue = Date.parse(status.nextRotation ?? "") || undefined;
  t.sweepDue = Date.parse(status.previousPasswordDeleteAt ?? "") || undefined;
}

/**
 * Every order Ready on its live generation, the delivered Secret naming it, at most one superseded
 * user within its grace, and OpenBao holding exactly what was delivered. A restarted OpenBao gets its
 * backups back on the orders' next passes, so the checks are given time to converge.
 */
export async function checkConverged(run: ChaosRun, w: TargetWorld): Promise<void> {
  let last: string[] = [];
  const converged = await waitUntil("the orders to converge", 180_000, run.signal, async () => {
    last = [];
    for (const o of run.orders) last.push(...(await checkLive(run, w, o)));
    return last.length === 0;
  }).then(
    () => true,
    () => false,
  );
  if (!converged) run.failures.push(...last);
}

/**
 * After the orders' deletion: every order torn down, nothing of theirs left behind, and each Retain
 * order's vhost still holding the message `retained` names.
 */
export async function checkTornDown(
  run: ChaosRun,
  w: TargetWorld,
  retained: Map<string, string>,
): Promise<void> {
  const { orders, failures, signal } = run;
  const gone = await waitUntil("the orders to be torn down", 180_000, signal, async () => {
    for (const o of orders) if (await run.readOrderOf(o)) return false;
    return true;
  }).then(
    () => true,
    () => false,
  );
  if (!gone) {
    for (const o of orders) {
      const left = await run.readOrderOf(o).catch(() => undefined);
      if (!left) continue;
      const ready = left.status?.conditions?.find((c) => c.type === "Ready");
      const children = await checkGone(run, w, o).catch((e: unknown) => [String(e)]);
      failures.push(
        `${o.name}: not torn down within 180 s (Ready ${ready?.reason}: ${ready?.message}); ${children.join("; ")}`,
      );
    }
  } else {
    let leftovers: string[] = [];
    const clean = await waitUntil("nothing left behind", 60_000, signal, async () => {
      leftovers = [];
      for (const o of orders) leftovers.push(...(await checkGone(run, w, o)));
      return leftovers.length === 0;
    }).then(
      () => true,
      () => false,
    );
    if (!clean) failures.push(...leftovers);
    for (const o of orders.filter((o) => o.retain)) {
      const problem = await checkRetained(
        onBus(w, run.busOf(o)),
        vhostName(o.key),
        retained.get(o.name) ?? "",
      );
      if (problem) failures.push(`${o.name}: ${problem}`);
    }
  }
}

/** The run's figures against its configuration, each shortfall a failure; what the report shows of them. */
export function checkFigures(
  run: ChaosRun,
  figures: OrderFigures[],
): Pick<ChaosReport, "rotations" | "logins" | "overlaps" | "shortGraces"> {
  const { config, failures, leaderFaults, outages, otherOutsideFaults, mostLeaders } = run;
  const rotations = figures.reduce((n, f) => n + f.rotations, 0);
  const sum = (pick: (c: ProberCounts) => number) => figures.reduce((n, f) => n + pick(f.prober), 0);
  // A refusal inside an emptied broker's window is expected and counted apart; any other fails the run.
  const logins = {
    ok: sum((c) => c.successes),
    authFailed: sum((c) => c.authFailures) - run.refusedWhileEmptied,
    refusedWhileEmptied: run.refusedWhileEmptied,
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
  const seen = overlaps([...run.tracks.values()], run.faultSpans);
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
  const stepSpans = run.faultSpans
    .filter((f) => f.kind === "clock-step")
    .map((f) => ({ ...f, end: f.end + 60_000 }));
  const shortGraces = run.graces
    .filter((g) => g.end - g.start < graceMs - 3_000)
    .filter((g) => stepSpans.some((f) => g.start <= f.end && f.start <= g.end))
    .map(
      (g) =>
        `${g.order}: ${((g.end - g.start) / 1000).toFixed(0)} s of ${config.grace}, ` +
        `live ${new Date(g.start).toISOString()}, swept by ${new Date(g.end).toISOString()}`,
    );
  return { rotations, logins, overlaps: seen, shortGraces };
}

async function checkLive(run: ChaosRun, w: TargetWorld, o: ChaosOrder): Promise<string[]> {
  const problems: string[] = [];
  const order = await run.readOrderOf(o);
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
  const bus = run.busOf(o);
  const users = await brokerUsers(onBus(w, bus), `${vhostName(o.key)}-v`);
  if (!users.includes(live)) problems.push(`${o.name}: the live user ${live} is not on ${bus.name}`);
  // A bus the order moved away from keeps none of its users.
  for (const other of run.buses.filter((b) => b !== bus)) {
    for (const user of await brokerUsers(onBus(w, other), `${vhostName(o.key)}-v`))
      problems.push(`${o.name}: broker user ${user} is left on ${other.name}, which the order is not on`);
  }
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

async function checkGone(run: ChaosRun, w: TargetWorld, o: ChaosOrder): Promise<string[]> {
  const problems: string[] = [];
  const selector = childSelector(RABBITMQ_NAMING, o.key);
  const last = run.busOf(o);
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
  for (const bus of run.buses) {
    for (const user of await brokerUsers(onBus(w, bus), `${vhostName(o.key)}-v`)) {
      problems.push(`${o.name}: broker user ${user} is left on ${bus.name}`);
    }
    // A Retain order keeps its vhost on its last bus, and on each it moved away from (not checked).
    const vhost = await brokerApi(
      onBus(w, bus),
      "GET",
      `/api/vhosts/${encodeURIComponent(vhostName(o.key))}`,
    );
    await vhost.arrayBuffer();
    if (o.retain && bus === last && vhost.status !== 200)
      problems.push(`${o.name}: Retain, but the vhost is gone from ${bus.name} (${vhost.status})`);
    if (!o.retain && vhost.status !== 404)
      problems.push(`${o.name}: the vhost is left on ${bus.name} (${vhost.status})`);
  }
  if (await openBaoRead(backupPath(RABBITMQ_NAMING, o.key, w.cpNs)))
    problems.push(`${o.name}: the OpenBao backup is left`);
  return problems;
}

async function brokerUsers(w: TargetWorld, prefix: string): Promise<string[]> {
  const res = await brokerApi(w, "GET", "/api/users");
  if (!res.ok) throw new Error(`GET /api/users: HTTP ${res.status}`);
  const users = (await res.json()) as { name: string }[];
  return users.map((u) => u.name).filter((n) => n.startsWith(prefix));
}
