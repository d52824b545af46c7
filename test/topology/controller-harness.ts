// Shared set-up of the topology controller's integration tests: the CRDs, a RabbitmqCluster stand-in
// pointing at the local broker, controller deps with a captured logger, a loop that drives one
// reconcile function the way a work queue would, and cleanup of everything a test made.
import type { Result } from "../../src/runtime/loop/controller.ts";
import { serveEverything } from "./ownership.ts";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { pino } from "pino";
import { createManagedBus, installCrds, localBrokerFromEnv } from "../../harness/world/managed-bus.ts";
import type { KindRef } from "../../src/api/index.ts";
import { TerminalError, TransientError } from "../../src/runtime/base/errors.ts";
import { KubeRest } from "../../src/runtime/port/kube-rest.ts";
import { RestKube } from "../../src/runtime/port/rest-kube.ts";
import {
  createControllerDeps,
  type Broker,
  type ControllerDeps,
  type ControllerSettings,
  type OwnershipSettings,
} from "../../src/topology/index.ts";
import { freshNamespace, testCluster } from "../../harness/world/kube.ts";
import { getResource as getObject, tearDownObjects } from "../../harness/world/custom-objects.ts";

export { createResource, custom, deleteResource, patchSpec } from "../../harness/world/custom-objects.ts";
import { reconcileExternal, type AnyExternalKind } from "../../src/external/index.ts";
import { clients, env } from "./broker-support.ts";

export { admin, canLogIn, clients, env, unique } from "./broker-support.ts";

export const cluster = testCluster("management");
const run = promisify(execFile);

/** Every log line any deps of this process wrote, for the "no password in a log line" checks. */
export const logLines: string[] = [];
const logger = pino(
  { level: "debug", base: undefined },
  { write: (line: string) => void logLines.push(line) },
);

/** Test settings: short periods, so a verification pass is seconds away. */
export const testSettings: Partial<ControllerSettings> = {
  verificationPeriodMs: 2_000,
  waitingRetryMs: 300,
  transientRetryMs: 300,
};

export function makeDeps(
  ownership: OwnershipSettings = serveEverything,
  settings: Partial<ControllerSettings> = {},
): ControllerDeps {
  return createControllerDeps(new RestKube(new KubeRest(cluster.kubeconfig)), {
    ownership,
    logger,
    clients,
    settings: { ...testSettings, ...settings },
  });
}

/** CRDs installed and a namespace holding the RabbitmqCluster `rabbitmq` stand-in. */
export async function setUpNamespace(prefix: string): Promise<string> {
  await installCrds(cluster.config);
  const namespace = await freshNamespace(cluster, prefix);
  await createManagedBus(cluster.config, namespace, localBrokerFromEnv(env as unknown as NodeJS.ProcessEnv));
  return namespace;
}

/** Removes every object of the seven kinds in `namespace` (finalizers first), then the namespace. */
export const tearDownNamespace = tearDownObjects;

export interface TopologyResource {
  metadata: {
    name: string;
    uid: string;
    generation: number;
    resourceVersion: string;
    finalizers?: string[];
    ownerReferences?: { kind: string; name: string; controller?: boolean }[];
  };
  spec: Record<string, unknown>;
  status?: {
    conditions?: {
      type: string;
      status: string;
      reason?: string;
      message?: string;
      lastTransitionTime?: string;
    }[];
    observedGeneration?: number;
    username?: string;
    credentials?: { name?: string };
  };
}

export const getResource = (kind: KindRef, namespace: string, name: string) =>
  getObject<TopologyResource>(kind, namespace, name);

export function condition(resource: TopologyResource | undefined, type: string) {
  return resource?.status?.conditions?.find((c) => c.type === type);
}

/** A kind whose pass a test drives. */
export type Reconcile = AnyExternalKind<ControllerDeps, Broker>;
export type Settled =
  { outcome: Result; terminal?: undefined } | { outcome?: undefined; terminal: TerminalError };

/**
 * Calls `reconcile` as a work queue would until it settles: no requeue, a requeue no sooner than
 * the verification period (the object is applied), or a terminal error. Transient errors and short
 * requeues are retried after their delay; gives up after `limitMs`.
 */
export async function settle(
  reconcile: Reconcile,
  deps: ControllerDeps,
  namespace: string,
  name: string,
  limitMs = 30_000,
): Promise<Settled> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    let delay: number;
    try {
      const outcome = await reconcileExternal(reconcile, deps, namespace, name);
      if (
        outcome.requeueAfterMs === undefined ||
        outcome.requeueAfterMs >= deps.settings.verificationPeriodMs
      ) {
        return { outcome };
      }
      delay = outcome.requeueAfterMs;
    } catch (error) {
      if (error instanceof TerminalError) return { terminal: error };
      if (!(error instanceof TransientError)) throw error;
      delay = error.retryAfterMs ?? deps.settings.transientRetryMs;
    }
    if (Date.now() + delay > deadline)
      throw new Error(`${namespace}/${name} did not settle in ${limitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, Math.min(delay, 1_000)));
  }
}

/**
 * The retry the broker's refusal asks for (a refusal is never terminal). A write conflict (another
 * writer of the object) is retried first, as a work queue would.
 */
export async function refusal(
  reconcile: Reconcile,
  deps: ControllerDeps,
  namespace: string,
  name: string,
): Promise<TransientError> {
  for (let attempt = 0; ; attempt++) {
    const outcome = await reconcileExternal(reconcile, deps, namespace, name).then(
      (result) => new Error(`${namespace}/${name} was not refused: ${JSON.stringify(result)}`),
      (error: unknown) => error,
    );
    if (!(outcome instanceof TransientError)) throw outcome;
    if (!/conflicted with a newer version/.test(outcome.message) || attempt >= 5) return outcome;
  }
}

export async function rabbitmqctl(...args: string[]): Promise<string> {
  const { stdout } = await run(env.RABBITMQCTL, args);
  return stdout;
}

/** Fails naming the first captured log line holding one of `secrets`. */
export function logLinesHolding(secrets: readonly string[]): string[] {
  return logLines.filter((line) => secrets.some((s) => s && line.includes(s)));
}
