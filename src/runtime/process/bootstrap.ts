import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import { build, userAgent, versionLine } from "../base/build.ts";
import { realClock, type Clock } from "../base/clock.ts";
import type { ClusterSource } from "../port/cluster.ts";
import { loadConfig, runtimeSettings, type RuntimeConfig } from "./config.ts";
import { KubeRest } from "../port/kube-rest.ts";
import {
  KubeconfigError,
  loadDefaultKubeconfig,
  loadKubeconfigFiles,
  type Kubeconfig,
} from "../port/kubeconfig.ts";
import { createLogger, type Logger } from "../base/logging.ts";
import { Manager } from "./manager.ts";
import { Metrics } from "../loop/metrics.ts";
import { SettingsError, helpText, type SettingValues } from "./settings.ts";

// The process start-up, in the order of seed 004: configuration, logging, kinds, clients,
// controllers, probes, run; then a graceful stop on SIGTERM/SIGINT, or exit 1 on a lost Lease.

export interface StartContext<G extends typeof runtimeSettings> {
  config: SettingValues<G>;
  log: Logger;
  metrics: Metrics;
  clock: Clock;
  /** The management cluster's client (from --kubeconfig, KUBECONFIG or the in-cluster config). */
  management: KubeRest;
  /** The pod this process runs in (POD_NAME, which the chart sets, else the hostname): what reports Events. */
  podName: string;
}

export interface Program<G extends typeof runtimeSettings> {
  name: string;
  settings: G;
  /** Kinds: e.g. check that the CRDs are served; runs before any client is built. */
  kinds?: (context: { config: SettingValues<G>; log: Logger }) => void | Promise<void>;
  clusters: (context: StartContext<G>) => ClusterSource;
  controllers: (manager: Manager, context: StartContext<G>) => void | Promise<void>;
}

export function loadManagementConfig(path: string): Kubeconfig {
  return path ? loadKubeconfigFiles([path]) : loadDefaultKubeconfig();
}

/** The pod's name from the downward API's POD_NAME; else the hostname, which a pod's is by default. */
export function podName(env: Record<string, string | undefined>, host = hostname()): string {
  return env["POD_NAME"] || host;
}

/** Runs the program; resolves with the exit code. */
export async function runProgram<G extends typeof runtimeSettings>(
  program: Program<G>,
  argv = process.argv.slice(2),
  env = process.env,
): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(`${helpText(program.name, program.settings)}\n`);
    return 0;
  }
  if (argv.includes("--version")) {
    process.stdout.write(`${versionLine({ ...build, name: program.name })}\n`);
    return 0;
  }
  let config: SettingValues<G>;
  try {
    config = loadConfig(program.settings, argv, env);
  } catch (error) {
    if (!(error instanceof SettingsError)) throw error;
    process.stderr.write(`${program.name}: ${error.message}\n`);
    return 2;
  }
  const runtime = config as RuntimeConfig;
  const log = createLogger({ level: runtime["log-level"] });
  await program.kinds?.({ config, log });
  const clock = realClock;
  const metrics = new Metrics({ clock });
  let management: KubeRest;
  let lease: KubeRest;
  try {
    const managementConfig = loadManagementConfig(runtime.kubeconfig);
    management = new KubeRest(managementConfig, (request) => metrics.observeApiRequest(request));
    lease = new KubeRest(
      managementConfig,
      (request) => metrics.observeApiRequest(request, true),
      userAgent("leader-election"),
    );
  } catch (error) {
    if (!(error instanceof KubeconfigError)) throw error;
    process.stderr.write(`${program.name}: ${error.message}\n`);
    return 2;
  }
  const context: StartContext<G> = { config, log, metrics, clock, management, podName: podName(env) };
  const identity = runtime["leader-election-identity"] || `${hostname()}_${randomBytes(4).toString("hex")}`;
  const manager = new Manager({
    config: runtime,
    log,
    metrics,
    clock,
    clusters: program.clusters(context),
    management,
    lease,
    identity,
  });
  await program.controllers(manager, context);
  await manager.startServers();
  let stopping: Promise<void> | undefined;
  const stop = (signal: string) => {
    log.info({ signal }, "shutting down: letting reconciles in flight finish");
    stopping ??= manager.shutdown();
  };
  process.once("SIGTERM", () => stop("SIGTERM"));
  process.once("SIGINT", () => stop("SIGINT"));
  log.info({ identity }, `${program.name} starting`);
  const outcome = await manager.run();
  if (outcome === "lost") {
    log.error("leadership lost; exiting so that a fresh process can stand by");
    return 1;
  }
  await stopping;
  log.info("stopped");
  return 0;
}
