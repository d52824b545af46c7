// The lane-per-broker phases, on the running operator: (1) N orders on one broker, then 2N split over
// two brokers (the local environment's second RabbitMQ node), each from a broker without the other's
// vhosts; (2) N orders of a healthy broker alone, then the same beside H orders of a hung broker (a
// proxy to the second broker that accepts and never answers), whose lane must hold only its own
// workers. Each ControlPlane has its own namespaces; the orders are torn down after each step, the hung
// broker's once it answers again.
import type { World } from "../world/world.ts";
import { secondBroker } from "../world/emptied-broker.ts";
import { TcpProxy } from "../world/tcp-proxy.ts";
import { createControlPlane, createManagedBus, type LocalBroker } from "../world/managed-bus.ts";
import type { KubeRest } from "../../src/runtime/port/kube-rest.ts";
import { freshNamespace } from "../world/kube.ts";
import type { Counters } from "./backend.ts";
import { range, timed, until } from "./concurrency.ts";
import { emptiedBrokerRecovery } from "./emptied-broker.ts";
import { cpuSnapshot, machineCpu, type MachineCpu } from "./machine.ts";
import { applyOrders, deleteOrders, OrderWatch, type OrderSet } from "./orders.ts";

export interface LanesResult {
  orders: number;
  hungOrders: number;
  /** N orders Ready on one broker. */
  oneBrokerMs: number;
  /** 2N orders Ready, N on each of two brokers, created at once. */
  twoBrokersMs: number;
  /** The second broker's N orders back on it after it was restarted empty (emptied-broker.ts). */
  emptiedRecoveryMs: number;
  /** The machine's CPU over each of the two: what bounds the second where no broker does. */
  oneBrokerMachine: MachineCpu;
  twoBrokersMachine: MachineCpu;
  /** N orders of the healthy broker Ready, alone. */
  aloneMs: number;
  /** The same N beside `hungOrders` orders of a hung broker, created after them. */
  besideHungMs: number;
}

export interface LanesArgs {
  w: World;
  rest: KubeRest;
  orders: number;
  hungOrders: number;
  gracePeriod: string;
  /** The running operator's figures (its CPU for the machine rows). */
  counters: () => Promise<Counters>;
  /** Namespaces the run deletes at its end. */
  namespaces: string[];
  log: (line: string) => void;
  signal?: AbortSignal | undefined;
}

/** A ControlPlane of its own whose bus is `broker`, with one tenant namespace. */
async function controlPlaneOn(
  w: World,
  prefix: string,
  broker: LocalBroker,
  namespaces: string[],
): Promise<{ cpNs: string; tenantNs: string }> {
  const cpNs = await freshNamespace(w.cluster, `${prefix}-cp`);
  const tenantNs = await freshNamespace(w.cluster, `${prefix}-tenant`);
  namespaces.push(cpNs, tenantNs);
  await createManagedBus(w.cluster.config, cpNs, broker);
  await createControlPlane(w.cluster.config, cpNs, "cp", [{ namespace: tenantNs }]);
  return { cpNs, tenantNs };
}

export async function lanePhases(args: LanesArgs): Promise<LanesResult> {
  const { w, rest, orders: n, hungOrders, log, signal } = args;
  const second = await controlPlaneOn(w, "bench-lane2", secondBroker(), args.namespaces);
  const hung = await TcpProxy.to(secondBroker().managementUrl);
  const watches: OrderWatch[] = [];
  try {
    const hungCp = await controlPlaneOn(
      w,
      "bench-hung",
      { ...secondBroker(), managementUrl: `http://127.0.0.1:${hung.port}` },
      args.namespaces,
    );
    const watchOf = (namespace: string) => {
      const watch = new OrderWatch(rest, namespace);
      watches.push(watch);
      return watch;
    };
    const orderSet = (namespace: string, cpNs: string, names: string[]): OrderSet => ({
      rest,
      namespace,
      controlPlane: { name: "cp", namespace: cpNs },
      names,
      gracePeriod: args.gracePeriod,
    });
    const onFirstBroker = (names: string[]) => orderSet(w.tenantNs, w.controlPlane.namespace, names);
    const onFirst = watchOf(w.tenantNs);
    const onSecond = watchOf(second.tenantNs);
    const onHung = watchOf(hungCp.tenantNs);
    const names = (prefix: string, count = n) => range(count).map((i) => `${prefix}-${i}`);
    const allReady = (sets: [OrderWatch, OrderSet][], what: string) =>
      until(
        what,
        async () => {
          for (const [watch, set] of sets)
            if ((await watch.census(set, undefined, signal)).ready < set.names.length) return false;
          return true;
        },
        60 * 60_000,
        250,
        signal,
      );
    const gone = (sets: [OrderWatch, OrderSet][], what: string) =>
      Promise.all(sets.map(([, set]) => deleteOrders(set))).then(() =>
        until(
          what,
          async () => {
            for (const [watch, set] of sets)
              if ((await watch.census(set, undefined, signal)).total > 0) return false;
            return true;
          },
          30 * 60_000,
          1_000,
          signal,
        ),
      );

    /** `work` timed, with the machine's CPU over it. */
    const measured = async (work: () => Promise<void>): Promise<[number, MachineCpu]> => {
      const cpu = cpuSnapshot();
      const operator = (await args.counters()).cpuSeconds;
      const ms = await timed(work);
      const used = (await args.counters()).cpuSeconds - operator;
      return [ms, machineCpu(cpu, cpuSnapshot(), used)];
    };

    // N on one broker, then 2N on two.
    const one = onFirstBroker(names("lane-one"));
    const [oneBrokerMs, oneBrokerMachine] = await measured(async () => {
      await applyOrders(one, 1);
      await allReady([[onFirst, one]], `${n} orders Ready on one broker`);
    });
    log(`lanes: ${n} orders Ready on one broker in ${(oneBrokerMs / 1000).toFixed(1)} s`);
    await gone([[onFirst, one]], "the one broker's orders gone");
    const a = onFirstBroker(names("lane-a"));
    const b = orderSet(second.tenantNs, second.cpNs, names("lane-b"));
    const [twoBrokersMs, twoBrokersMachine] = await measured(async () => {
      await Promise.all([applyOrders(a, 1), applyOrders(b, 1)]);
      await allReady(
        [
          [onFirst, a],
          [onSecond, b],
        ],
        `${2 * n} orders Ready on two brokers`,
      );
    });
    log(`lanes: ${2 * n} orders Ready on two brokers in ${(twoBrokersMs / 1000).toFixed(1)} s`);
    const emptiedRecoveryMs = await emptiedBrokerRecovery(secondBroker(), signal);
    log(
      `lanes: the second broker restarted empty, its ${n} orders back in ${(emptiedRecoveryMs / 1000).toFixed(1)} s`,
    );
    await gone(
      [
        [onFirst, a],
        [onSecond, b],
      ],
      "the two brokers' orders gone",
    );

    // N of a healthy broker alone, then beside the hung broker's H.
    const alone = onFirstBroker(names("lane-alone"));
    const aloneMs = await timed(async () => {
      await applyOrders(alone, 1);
      await allReady([[onFirst, alone]], `${n} orders Ready alone`);
    });
    log(`lanes: ${n} orders of the healthy broker Ready alone in ${(aloneMs / 1000).toFixed(1)} s`);
    await gone([[onFirst, alone]], "the healthy broker's orders gone");
    hung.hold();
    const stuck = orderSet(hungCp.tenantNs, hungCp.cpNs, names("lane-hung", hungOrders));
    await applyOrders(stuck, 1);
    // Their children are made and their first passes wait on the hung broker.
    await until(
      "the hung broker's orders admitted",
      async () => (await onHung.census(stuck, undefined, signal)).total === hungOrders,
      5 * 60_000,
      250,
      signal,
    );
    await new Promise((r) => setTimeout(r, 3_000));
    const beside = onFirstBroker(names("lane-beside"));
    const besideHungMs = await timed(async () => {
      await applyOrders(beside, 1);
      await allReady([[onFirst, beside]], `${n} orders Ready beside a hung broker`);
    });
    log(
      `lanes: ${n} orders Ready beside ${hungOrders} of a hung broker in ${(besideHungMs / 1000).toFixed(1)} s`,
    );
    // The hung broker answers again, so that its orders can be torn down.
    hung.unhold();
    await gone(
      [
        [onFirst, beside],
        [onHung, stuck],
      ],
      "the lanes' orders gone",
    );
    return {
      orders: n,
      hungOrders,
      oneBrokerMs,
      twoBrokersMs,
      emptiedRecoveryMs,
      oneBrokerMachine,
      twoBrokersMachine,
      aloneMs,
      besideHungMs,
    };
  } finally {
    await Promise.all(watches.map((watch) => watch.stop()));
    hung.unhold();
    await hung.stop();
  }
}
