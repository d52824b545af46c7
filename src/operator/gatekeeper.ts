// The gatekeeper of this process: the plugins the settings name (plus the mandatory ones) loaded and
// configured at start-up, their invocations counted in the process's registry. A plugin that cannot be
// loaded or configured stops the start with a GatekeeperStartError (exit 2).
import { Gatekeeper } from "../gatekeeper/gatekeeper.ts";
import { loadPlugins, mandatoryPlugins } from "../gatekeeper/loader.ts";
import { GatekeeperMetrics } from "../gatekeeper/metrics.ts";
import { entryOrder, exitOrder } from "../gatekeeper/order.ts";
import type { Clock } from "../runtime/base/clock.ts";
import { RestKube } from "../runtime/port/rest-kube.ts";
import type { KubeRest } from "../runtime/port/kube-rest.ts";
import type { WriteFence } from "../runtime/base/write-fence.ts";
import type { Logger } from "../runtime/base/logging.ts";
import type { Metrics } from "../runtime/loop/metrics.ts";
import type { OperatorConfig } from "./settings.ts";

/** The API server's gitVersion, or "unknown" (a plugin's configure decides whether it needs it). */
async function kubernetesVersion(management: KubeRest, log: Logger): Promise<string> {
  try {
    const version = await management.request<{ gitVersion?: string }>("GET", "/version");
    return version.gitVersion ?? "unknown";
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    log.warn({ error: why }, "reading the Kubernetes version for the gatekeeper plugins failed");
    return "unknown";
  }
}

export async function startGatekeeper(options: {
  config: OperatorConfig;
  management: KubeRest;
  clock: Clock;
  log: Logger;
  metrics: Metrics;
  env?: Readonly<Record<string, string | undefined>>;
  /** Asked before every write of a plugin's Kubernetes port (the manager's Lease fence). */
  fence?: WriteFence;
}): Promise<Gatekeeper> {
  const { config, management, clock, log } = options;
  const entries = {
    default: config["gatekeeper-default-plugins"],
    custom: config["gatekeeper-custom-plugins"],
  };
  const any = mandatoryPlugins.length + entries.default.length + entries.custom.length > 0;
  const version = any ? await kubernetesVersion(management, log) : "unknown";
  const kube = new RestKube(management, { fence: options.fence });
  const plugins = await loadPlugins({
    entries,
    context: (plugin) => ({
      kube,
      kubernetesVersion: version,
      log: log.child({ plugin }),
      clock,
      env: options.env ?? process.env,
    }),
  });
  const name = ({ group, plugin }: { group: string; plugin: { name: string } }) =>
    `${plugin.name} (${group})`;
  log.info(
    { entry: entryOrder(plugins).map(name), exit: exitOrder(plugins).map(name) },
    "gatekeeper plugins loaded",
  );
  return new Gatekeeper({
    plugins,
    log,
    clock,
    metrics: new GatekeeperMetrics(options.metrics.registry),
    backoff: { baseMs: 1_000, capMs: config["transient-requeue-interval"] },
    hookTimeoutMs: config["gatekeeper-hook-timeout"],
  });
}
