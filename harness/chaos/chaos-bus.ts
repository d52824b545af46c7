// The chaos run's two buses and its bus-change fault. The world's bus (`rabbitmq`, the local 4.3 broker)
// and a second RabbitmqCluster stand-in, `rabbitmq-b`, for the 3.10 broker (`rabbitmq-2`: the node
// resetBroker(2) can empty), each reached by the operator through a TCP proxy of its own, so that the
// broker-specific faults (a RabbitMQ outage, an emptied broker, the management API unanswering or cut off)
// act on the bus the management-cluster orders are on at the time (`run.bus`).
//
// A bus change re-points the ControlPlane of the management-cluster orders (MOVING_CONTROL_PLANE) at the
// other bus; the next one points it back. The target-cluster orders stay on the world's ControlPlane `cp`,
// which a bus change never touches: their delivered address is that ControlPlane's one
// publishedMessagingEndpoint, here the world broker's own AMQP port, which cannot name two brokers at once.
// Moving it with the orders would refuse logins whichever moment it moved at: before the switch the
// delivered user is on the old broker, after it on the new one, and the Secrets of all of them do not
// switch at one instant. A proxy behind the endpoint would not help either (it cannot tell which broker a
// login's user is on), so those orders keep their bus and every bus change is a complete move of the rest.
import { createControlPlane, createManagedBus } from "../world/managed-bus.ts";
import { vhostName } from "../../src/orders/rabbitmq/naming.ts";
import type { PlannedFault } from "./chaos-plan.ts";
import { leaderFault } from "./chaos-faults.ts";
import { MOVING_CONTROL_PLANE, sleep, type ChaosBus, type ChaosRun, onBus } from "./chaos-run.ts";
import { localNode } from "../world/local-brokers.ts";
import { TcpProxy } from "../world/tcp-proxy.ts";
import { brokerApi, type TargetWorld } from "../world/target-cluster.ts";

/** How long every management-cluster order may take to move: a timeout is a failed check. */
export const BUS_CHANGE_BOUND_MS = 300_000;

const BUSES = [
  { name: "rabbitmq", part: "rabbitmq", node: 1 },
  { name: "rabbitmq-b", part: "rabbitmq-2", node: 2 },
] as const;

/** Each bus's proxy to its broker's management API, added to the run as it is opened. */
export async function openBuses(run: ChaosRun): Promise<void> {
  for (const bus of BUSES) {
    const broker = localNode(bus.part).broker;
    run.buses.push({ ...bus, broker, proxy: await TcpProxy.to(broker.managementUrl) });
  }
}

const proxied = (bus: ChaosBus) => `http://127.0.0.1:${bus.proxy.port}`;

/** The management API the world's RabbitmqCluster names: its bus's proxy. */
export function worldManagementUrl(run: ChaosRun): string {
  const bus = run.buses[0];
  if (!bus) throw new Error("the run's buses are not open");
  return proxied(bus);
}

/**
 * In the world: the second bus's stand-in, and the management-cluster orders' ControlPlane on the
 * world's bus (assigning the management tenant namespaces, which the world's `cp` assigns too).
 */
export async function createSecondBus(run: ChaosRun, w: TargetWorld): Promise<void> {
  for (const bus of run.buses.slice(1)) {
    await createManagedBus(
      w.management.config,
      w.cpNs,
      { ...bus.broker, managementUrl: proxied(bus) },
      bus.name,
    );
  }
  await pointAt(w, run.bus);
}

function pointAt(w: TargetWorld, bus: ChaosBus): Promise<void> {
  const assignments = w.managementTenants.map((namespace) => ({ namespace }));
  return createControlPlane(w.management.config, w.cpNs, MOVING_CONTROL_PLANE, assignments, {
    busName: bus.name,
  });
}

/**
 * The management-cluster orders' ControlPlane pointed at the other bus (server-side apply with the
 * world's field manager, every field it has); the leader killed part-way where the plan says so. Its span
 * lasts until every management-cluster order names the new bus in `status.backend` with no
 * `status.migration`, at most BUS_CHANGE_BOUND_MS.
 */
export async function busChange(run: ChaosRun, w: TargetWorld, fault: PlannedFault): Promise<void> {
  const { log, signal } = run;
  const from = run.bus;
  const to = run.buses[(run.moved + 1) % run.buses.length] ?? from;
  const orders = run.orders.filter((o) => o.key.cluster === "");
  const start = Date.now();
  run.activeFaults++;
  try {
    log(`bus-change: ControlPlane ${MOVING_CONTROL_PLANE} from ${from.name} to ${to.name}`);
    await pointAt(w, to);
    run.moved = run.buses.indexOf(to);
    run.outages["bus-change"]++;
    if (fault.killAtMs !== undefined) {
      await sleep(fault.killAtMs, signal);
      await leaderFault(run, "kill", 0);
    }
    let left: string[] = [];
    let movedMs: number | undefined;
    while (Date.now() - start < BUS_CHANGE_BOUND_MS) {
      left = [];
      for (const o of orders) {
        const status = (await run.readOrderOf(o).catch(() => undefined))?.status;
        if (status?.backend === to.name && !status.migration) continue;
        const migration = status?.migration;
        left.push(
          `${o.name} on ${status?.backend ?? "?"}` +
            (migration ? ` (${migration.phase} from ${migration.from} to ${migration.to})` : ""),
        );
      }
      if (left.length === 0) {
        movedMs = Date.now() - start;
        break;
      }
      await sleep(1_000, signal);
    }
    run.busChanges.push({ from: from.name, to: to.name, movedMs });
    if (movedMs === undefined) {
      const problem = `bus-change: not every order moved to ${to.name} within ${BUS_CHANGE_BOUND_MS / 1000} s: ${left.join(", ")}`;
      run.failures.push(problem);
      log(`BUS-CHANGE ${problem}`);
    } else {
      log(
        `bus-change: every management-cluster order on ${to.name}, ${(movedMs / 1000).toFixed(1)}s after the change`,
      );
    }
  } finally {
    run.activeFaults--;
    run.lastFaultEnd = Date.now();
    run.faultSpans.push({ kind: "bus-change", start, end: run.lastFaultEnd });
  }
}

/**
 * After the run: every order's vhost and users removed from every bus. The world's clean-up knows its own
 * broker only, and the orders are gone by then; what is left is a Retain order's vhost (kept on each bus
 * it moved away from, and on its last one) or what a failed run left.
 */
export async function clearBuses(run: ChaosRun, w: TargetWorld): Promise<void> {
  for (const bus of run.buses) {
    const api = (method: string, path: string) =>
      brokerApi(onBus(w, bus), method, path).then((res) => res.arrayBuffer().then(() => res));
    const users = await brokerApi(onBus(w, bus), "GET", "/api/users")
      .then((res) => (res.ok ? (res.json() as Promise<{ name: string }[]>) : []))
      .catch(() => []);
    for (const o of run.orders) {
      const vhost = vhostName(o.key);
      await api("DELETE", `/api/vhosts/${encodeURIComponent(vhost)}`).catch(() => undefined);
      for (const user of users.filter((u) => u.name.startsWith(`${vhost}-v`)))
        await api("DELETE", `/api/users/${encodeURIComponent(user.name)}`).catch(() => undefined);
    }
  }
}
