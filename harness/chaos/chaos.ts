// The chaos suite: orders rotating on a short schedule, served by the chart's two replicas (leader
// election at the default timings), a login prober per order that re-reads the delivered Secret before
// every AMQP round trip, and faults at random points chosen by a seed: the leader killed with SIGKILL,
// frozen past its Lease or stopped with SIGTERM (its slot started again each time); RabbitMQ, OpenBao,
// etcd and both kube-apiservers stopped and started again; a ControlPlane's published endpoint withdrawn
// and restored for the target-cluster orders; the broker's management API, as the operator reaches it
// through a TCP proxy, unanswering or cut off while consumers still reach the broker; an order's status
// wiped; an order's delivery stalled by an admission policy while its successor's User is deleted; the
// leader's wall clock stepped back (or forward) by minutes with libfaketime, its monotonic clock
// untouched: it must keep its Lease throughout, and the step must show in the Lease's renewTime it
// writes; the broker restarted empty (refusals expected until the operator has declared everything
// again, within a bound); an order's live User lost during a grace (its finalizer stripped, the
// leader frozen), which must cost no login; and the management-cluster orders' ControlPlane pointed at
// another bus and back, every order moved with no refused login. Rotations and sweeps under way during a
// fault are counted, and faults aimed at the next ones make up a shortfall. At the end it checks the
// promise (no refused login but while the broker is empty, no failure of any kind outside a fault and
// the 30 s after it, every order Ready, at most one superseded user per order within its grace and none
// on the other bus, OpenBao holding the live credential, nothing left on either bus after deletion, a
// Retain order's vhost still holding its message) and returns the figures. Used by scripts/chaos.ts (`npm run chaos`) and e2e/chaos.itest.ts.
//
// This file runs the suite; the faults are chaos-faults.ts, the two buses and the bus change
// chaos-bus.ts, the tracking and the checks chaos-checks.ts, and the state they share chaos-run.ts.
import { deliveredSecretName } from "../../src/orders/core/naming.ts";
import { emptyCounts, LoginProber, type LoginOutcome } from "../probes/login-prober.ts";
import { LEADER_FAULTS, plan, type ChaosConfig, type LeaderFault } from "./chaos-plan.ts";
import type { ChaosReport, OrderFigures } from "./chaos-report.ts";
import { checkConverged, checkFigures, checkTornDown, RunWatch } from "./chaos-checks.ts";
import {
  aimFaults,
  clockStep,
  emptiedBroker,
  leaderFault,
  lostLiveUser,
  outage,
  statusWipe,
} from "./chaos-faults.ts";
import { busChange, clearBuses, createSecondBus, openBuses, worldManagementUrl } from "./chaos-bus.ts";
import { ChaosRun, isReady, sleep, waitUntil } from "./chaos-run.ts";
import { holdOperatorLock, releaseOperatorLock } from "../operator/operator-process.ts";
import { retainMessage } from "./retained-message.ts";
import { libfaketimePath } from "./wall-clock.ts";
import {
  applyOrder,
  createTargetWorld,
  deleteOrder,
  destroyTargetWorld,
  publishEndpoint,
  readSecret,
} from "../world/target-cluster.ts";

export async function runChaos(config: ChaosConfig): Promise<ChaosReport> {
  // The replicas run under libfaketime for the clock-step: without it, say so before anything starts.
  libfaketimePath();
  const started = Date.now();
  const run = new ChaosRun(config);
  const { workdir, signal, log, orders, replicas } = run;
  const operatorLog = `${workdir}/replica-{0,1}/operator.log`;

  const faults = plan(config);
  log(`seed ${config.seed}; ${faults.length} planned faults; workdir ${workdir}`);
  for (const f of faults) {
    log(
      `  plan +${(f.atMs / 1000).toFixed(1)}s ${f.kind} ${(f.durationMs / 1000).toFixed(1)}s` +
        (f.killAtMs !== undefined ? ` (leader killed after ${(f.killAtMs / 1000).toFixed(1)}s)` : "") +
        (f.stepS !== undefined ? ` (the leader's wall clock ${f.stepS > 0 ? "+" : ""}${f.stepS} s)` : ""),
    );
  }

  const watch = new RunWatch(run);
  try {
    await openBuses(run);
    run.world = await createTargetWorld(`chaos${config.seed % 1000}`, {
      managementTenants: 1,
      brokerManagementUrl: worldManagementUrl(run),
    });
    const w = run.world;
    await createSecondBus(run, w);
    log(
      `world: cp ${w.cpNs}, target tenant ${w.assigned[0]}, management tenant ${w.managementTenants[0]}; ` +
        `buses ${run.buses.map((b) => `${b.name} (${b.part})`).join(", ")}`,
    );
    await publishEndpoint(w, run.endpoint());
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
        run.orderSpec(orders.at(-1)),
      );
    }
    for (const o of orders) {
      await waitUntil(`${o.name} Ready`, 120_000, signal, async () => isReady(await run.readOrderOf(o)));
    }
    log(`${orders.length} orders Ready; probers start`);
    watch.start();
    for (const o of orders) {
      o.prober = new LoginProber({
        core: o.cluster.core,
        namespace: o.key.namespace,
        order: o.name,
        intervalMs: 500,
        maxAttempts: Number.MAX_SAFE_INTEGER,
        maxDurationMs: Number.MAX_SAFE_INTEGER,
        onOutcome: (outcome: LoginOutcome, username: string) => {
          const emptied = outcome.kind === "auth" ? run.emptiedWindowAt() : undefined;
          if (emptied) {
            // The broker restarted empty refuses until the operator has declared the user again.
            emptied.refusals++;
            run.refusedWhileEmptied++;
            if (emptied.refusals === 1)
              log(`refused while the broker is empty (expected): ${o.name} user ${username}`);
          } else if (outcome.kind === "auth") {
            const line = `${new Date().toISOString()} ${o.name} user ${username}: ${outcome.message}`;
            run.authFailures.push(line);
            log(`AUTH FAILURE ${line}`);
          } else if (
            outcome.kind === "other" &&
            run.activeFaults === 0 &&
            Date.now() - run.lastFaultEnd > 30_000
          ) {
            run.otherOutsideFaults++;
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
        await leaderFault(run, fault.kind as LeaderFault, fault.durationMs);
      } else if (fault.kind === "clock-step") {
        await clockStep(run, fault.stepS ?? -300, fault.durationMs);
      } else if (fault.kind === "status-wipe") {
        await statusWipe(run);
      } else if (fault.kind === "emptied-broker") {
        await emptiedBroker(run, w);
      } else if (fault.kind === "lost-live-user") {
        await lostLiveUser(run, w);
      } else if (fault.kind === "bus-change") {
        await busChange(run, w, fault);
      } else {
        await outage(run, w, fault);
      }
    }
    const remaining = windowStart + config.faultWindowMs - Date.now();
    if (remaining > 0) await sleep(remaining, signal);
    await aimFaults(run);
    // A lost live User's successor may still be due.
    await Promise.all(run.pending);
    log("fault window over; checking the orders");

    await checkConverged(run, w);

    const figures: OrderFigures[] = [];
    for (const o of orders) {
      const counts = (await o.prober?.stop()) ?? emptyCounts();
      o.prober = undefined;
      const generation = (await run.readOrderOf(o))?.status?.passwordGeneration ?? 0;
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
    await checkTornDown(run, w, retained);

    const { rotations, logins, overlaps, shortGraces } = checkFigures(run, figures);
    const kept: Omit<ChaosConfig, "log" | "signal"> = { ...config };
    delete (kept as ChaosConfig).log;
    delete (kept as ChaosConfig).signal;
    return {
      seed: config.seed,
      config: kept,
      rotations,
      leaderFaults: run.leaderFaults,
      outages: run.outages,
      overlaps,
      replicas: { ownExits: replicas.ownExits, mostLeaders: run.mostLeaders },
      clockSteps: run.clockSteps,
      emptiedBrokers: run.emptiedWindows.map((e) => ({ recoveredMs: e.recoveredMs, refusals: e.refusals })),
      lostLiveUsers: run.lostLiveUsers,
      busChanges: run.busChanges,
      shortGraces,
      logins,
      durationMs: Date.now() - started,
      orders: figures,
      failures: run.failures,
      authFailures: run.authFailures,
      workdir,
      operatorLog,
    };
  } finally {
    // Whatever happened: probers stopped, every stopped part started again, the endpoint published,
    // the world removed while the replicas still run, then the replicas stopped by their pids.
    run.finished = true;
    const { world, buses, stopped } = run;
    for (const o of orders) await o.prober?.stop().catch(() => undefined);
    if (stopped.size > 0) {
      log(`restoring ${[...stopped].join(", ")}`);
      await run.localenv("up").catch((e: unknown) => log(`localenv up failed: ${String(e)}`));
    }
    try {
      if (world && run.withdrawn) await publishEndpoint(world, run.endpoint()).catch(() => undefined);
      for (const bus of buses) {
        bus.proxy.unhold();
        await bus.proxy.start();
      }
      if (world) await replicas.keep().catch((e: unknown) => log(String(e)));
      await watch.stop();
      await destroyTargetWorld(world, 120_000).catch((e: unknown) => log(`clean-up: ${String(e)}`));
      if (world) await clearBuses(run, world);
    } finally {
      watch.abort();
      await replicas.stopBoth();
      for (const bus of buses) await bus.proxy.stop();
      releaseOperatorLock();
      log("done");
    }
  }
}
