// The restart among many topology objects: one Vhost with N Queues, N Exchanges and N Bindings (queue
// i to exchange i), made Ready by the running operator; then the operator is stopped and started
// again, and timed until every object was reconciled once and nothing is queued. What the restart
// costs is counted from the new leader's start: API writes (0 expected: everything is as desired),
// broker requests, and the leader's RSS once it is through. New work first: orders created one after
// the other on the settled operator are timed until Ready, then the operator restarted again as often,
// each time with another order created as the new leader starts its passes (the queue ranks it before
// the objects' checks, lanes.ts); the figures are the medians, one sample being a few seconds on a
// busy machine. The objects carry the topology load's label and go at the end, their vhost first on
// the broker, so each deletion finds its object gone.
import { randomBytes } from "node:crypto";
import { bindingKind, exchangeKind, queueKind, vhostKind } from "../../src/api/index.ts";
import { apiPath, type KubeRest } from "../../src/runtime/port/kube-rest.ts";
import { apiPath as brokerPath } from "../../src/topology/broker/index.ts";
import type { World } from "../world/world.ts";
import type { Backend, Counters, RunningBackend } from "./backend.ts";
import { inParallel, range, timed, until } from "./concurrency.ts";
import { brokerClient } from "./floors.ts";
import { applyOrders, deleteOrders, orderIsReady, type OrderSet } from "./orders.ts";
import { ReadyWatch, topologyLoad } from "./topology.ts";

export interface ScaleRestartResult {
  /** Queues, Exchanges and Bindings together (the Vhost aside). */
  objects: number;
  /** Applying them, and until all were Ready (the operator running throughout). */
  applyMs: number;
  readyMs: number;
  /** From the stop until the new leader had reconciled every object once and nothing was queued. */
  restartMs: number;
  /** The new leader's counters at that moment (everything it did since its start). */
  restart: Counters;
  /**
   * An order's time from its apply until Ready: on the settled operator, and created as a later restart
   * started; that restart's time until every object was seen again. Each the median of its samples.
   */
  orderIdleMs: number;
  orderDuringRestartMs: number;
  restartWithOrderMs: number;
  /** The samples, in the order they were taken. */
  samples: { orderIdleMs: number[]; orderDuringRestartMs: number[]; restartWithOrderMs: number[] };
}

export interface ScaleRestartArgs {
  backend: Backend;
  w: World;
  rest: KubeRest;
  /** Queues, and as many Exchanges and Bindings. */
  perKind: number;
  /** Orders timed on the settled operator, and restarts with an order created as they start. */
  samples: number;
  /** Orders of the world's tenant namespace, each applied by the tenant (orders.ts). */
  orders: (names: string[]) => OrderSet;
  /** The operator that runs now, and a way to stop it and start it again. */
  operator: RunningBackend;
  restart: () => Promise<RunningBackend>;
  log: (line: string) => void;
  signal?: AbortSignal | undefined;
}

export async function scaleRestart(args: ScaleRestartArgs): Promise<ScaleRestartResult> {
  const { w, rest, perKind: n, log, signal } = args;
  const ns = w.cpNs;
  const vhost = `bench-scale-${randomBytes(3).toString("hex")}`;
  const load = topologyLoad(rest, ns, vhost);
  const selector = load.selector;
  const running = { op: args.operator };
  const idleOrders = range(args.samples).map((i) => `${vhost}-idle-${i}`);
  const restartOrders = range(args.samples).map((i) => `${vhost}-restart-${i}`);
  const ready = new ReadyWatch(rest, [vhostKind, queueKind, exchangeKind, bindingKind], ns, selector);
  try {
    await load.vhost();
    const applyMs = await timed(() => inParallel(range(n), 32, (i) => load.triple(i), signal));
    log(`scale: ${3 * n} topology objects applied in ${(applyMs / 1000).toFixed(1)} s`);
    const readyMs = applyMs + (await timed(() => ready.until(3 * n + 1, 2 * 60 * 60_000, signal)));
    log(`scale: all Ready ${(readyMs / 1000).toFixed(1)} s after the first apply`);
    // Its work is done: a watch of 30,000 objects that lists again during the restart is load the
    // restart would be charged for.
    await ready.stop();
    const settled = () =>
      until("the operator to settle", async () => (await running.op.counters()).pending === 0, 30 * 60_000);
    await settled();
    const orderIdleMs: number[] = [];
    for (const name of idleOrders) {
      orderIdleMs.push(await timed(() => orderReady(args, name)));
      await settled();
    }
    log(`scale: orders on the settled operator Ready after ${seconds(orderIdleMs)}`);

    const { ms: restartMs, counters: restart } = await restartOnce(args, running);
    log(
      `scale: restart with ${3 * n} objects: every one seen again after ${(restartMs / 1000).toFixed(1)} s, ` +
        `${restart.apiWrites} API writes, ${restart.brokerReads + restart.brokerWrites} broker requests, ` +
        `RSS ${(restart.rssBytes / 2 ** 20).toFixed(0)} MiB`,
    );
    // Again, each time with an order created as the new leader starts: its writes are not the restart's.
    const orderDuringRestartMs: number[] = [];
    const restartWithOrderMs: number[] = [];
    for (const name of restartOrders) {
      await settled();
      const again = await restartOnce(args, running, name);
      orderDuringRestartMs.push(again.orderMs ?? NaN);
      restartWithOrderMs.push(again.ms);
    }
    log(
      `scale: restarts with an order created as each started: the orders Ready after ` +
        `${seconds(orderDuringRestartMs)}, every object seen again after ${seconds(restartWithOrderMs)}`,
    );
    return {
      objects: 3 * n,
      applyMs,
      readyMs,
      restartMs,
      restart,
      orderIdleMs: median(orderIdleMs),
      orderDuringRestartMs: median(orderDuringRestartMs),
      restartWithOrderMs: median(restartWithOrderMs),
      samples: { orderIdleMs, orderDuringRestartMs, restartWithOrderMs },
    };
  } finally {
    await ready.stop();
    await deleteOrders(args.orders([...idleOrders, ...restartOrders])).catch((error: unknown) =>
      log(`scale: clean-up of the orders: ${String(error)}`),
    );
    await removeAll(rest, w, ns, vhost, selector, log);
  }
}

/** The middle of `values` (the mean of the two middle ones for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return NaN;
  return sorted.length % 2 === 1
    ? (sorted[mid] ?? NaN)
    : ((sorted[mid - 1] ?? NaN) + (sorted[mid] ?? NaN)) / 2;
}

const seconds = (ms: readonly number[]): string => ms.map((m) => `${(m / 1000).toFixed(2)} s`).join(", ");

/**
 * Applies one order (the tenant's apply) and waits until it reads Ready, reading it every 20 ms: the
 * settled operator takes about 0.2 s, so a coarser reading would be most of the figure.
 */
async function orderReady(args: ScaleRestartArgs, name: string): Promise<void> {
  const orders = args.orders([name]);
  await applyOrders(orders, 1);
  await until(`order ${name} Ready`, () => orderIsReady(orders, name), 30 * 60_000, 20, args.signal);
}

/**
 * Stops the operator and starts it again, until the new leader has seen every object once and nothing
 * is queued (from the stop's start: the old leader's drain and Lease release are part of a restart);
 * with `order`, that order is created as the new leader starts and timed until Ready.
 */
async function restartOnce(
  args: ScaleRestartArgs,
  running: { op: RunningBackend },
  order?: string,
): Promise<{ ms: number; counters: Counters; orderMs: number | undefined }> {
  const { backend, perKind: n, log } = args;
  const started = performance.now();
  running.op = await args.restart();
  const op = running.op;
  const created = order === undefined ? undefined : timed(() => orderReady(args, order));
  // Awaited once every object is seen again; a failure before that must not go unhandled.
  created?.catch(() => undefined);
  let told = started;
  const seen = async () => {
    const c = await op.counters();
    const count = (plural: "queues" | "exchanges" | "bindings") =>
      c.reconciles[backend.topologyController(plural)] ?? 0;
    // Where the restart is, every 10 s: which kind's passes lag, and what they cost so far.
    if (performance.now() - told >= 10_000) {
      told = performance.now();
      log(
        `scale: ${progress((told - started) / 1000, [count("queues"), count("exchanges"), count("bindings")], c)}`,
      );
    }
    return count("queues") >= n && count("exchanges") >= n && count("bindings") >= n && c.pending === 0;
  };
  await until(`all ${3 * n} objects seen again`, seen, 60 * 60_000, 250, args.signal);
  const ms = performance.now() - started;
  return { ms, counters: await op.counters(), orderMs: await created };
}

function progress(seconds: number, [queues, exchanges, bindings]: number[], c: Counters): string {
  return (
    `restart +${seconds.toFixed(0)} s: passes ${queues} queues, ${exchanges} exchanges, ${bindings} bindings; ` +
    `${c.pending} pending; broker ${c.brokerReads} reads, ${c.brokerWrites} writes; API ${c.apiReads} reads, ` +
    `${c.apiWrites} writes; CPU ${c.cpuSeconds.toFixed(1)} s; RSS ${(c.rssBytes / 2 ** 20).toFixed(0)} MiB`
  );
}

/**
 * The vhost on the broker first (with everything in it), then the objects; waits until they are gone.
 * The API server ends a collection delete after its request timeout (a minute), 10,000 objects in, so
 * each kind's is asked again until none is left.
 */
async function removeAll(
  rest: KubeRest,
  w: World,
  ns: string,
  vhost: string,
  selector: string,
  log: (line: string) => void,
): Promise<void> {
  const gone = async () => {
    let left = false;
    for (const kind of [bindingKind, exchangeKind, queueKind, vhostKind]) {
      const page = await rest.request<{ items: unknown[] }>("GET", apiPath(kind, ns), {
        query: { labelSelector: selector, limit: 1 },
      });
      if (page.items.length === 0) continue;
      left = true;
      await rest
        .request("DELETE", apiPath(kind, ns), {
          query: { labelSelector: selector },
          signal: AbortSignal.timeout(2 * 60_000),
        })
        .catch((error: unknown) => log(`scale: clean-up: ${String(error)}; asking again`));
    }
    return !left;
  };
  try {
    await brokerClient(w.broker, 1).delete(brokerPath("vhosts", vhost));
    // The operator releases each finalizer; what is left when it stops would stall the world's deletion.
    await until("the scale phase's objects to go", gone, 30 * 60_000, 2_000);
  } catch (error) {
    log(`scale: clean-up: ${String(error)}`);
  }
}
