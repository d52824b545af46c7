// The upstream RabbitMQ Messaging Topology Operator as the topology backend of a test or a benchmark:
// `scripts/localenv.sh upstream-topology up` builds it into the cache when it is missing (minutes, once
// per machine), installs its thirteen CRDs in place of the project's rabbitmq.com ones and starts it by
// pid with its log in .localenv/logs/upstream-topology.log; `down` stops it and puts the project's CRDs
// back. vhost-broker then runs with `--topology-controller=false`.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { localEnv } from "./env.ts";

const script = fileURLToPath(new URL("../../scripts/localenv.sh", import.meta.url));

/** A cold build takes minutes on a 2-core machine; a hook that starts the operator allows this much. */
export const upstreamTopologyStartTimeoutMs = 20 * 60_000;

/** The flag vhost-broker runs with while the upstream operator serves the rabbitmq.com kinds. */
export const upstreamBackendArgs = ["--topology-controller=false"];

/** How the upstream operator runs: its workers per kind and a metrics address (default none). */
export interface UpstreamTopologyOptions {
  workers?: number;
  metricsAddress?: string;
}

function localenv(action: "up" | "down", options: UpstreamTopologyOptions = {}): Promise<void> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (options.workers) env["LOCALENV_UPSTREAM_TOPOLOGY_WORKERS"] = String(options.workers);
  if (options.metricsAddress) env["LOCALENV_UPSTREAM_TOPOLOGY_METRICS_ADDRESS"] = options.metricsAddress;
  return new Promise((resolve, reject) => {
    // The script's progress lines (the build, the pid) go to this process's stderr.
    const child = spawn("bash", [script, "upstream-topology", action], {
      env,
      stdio: ["ignore", "inherit", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
      process.stderr.write(chunk);
    });
    child.once("error", reject);
    child.once("exit", (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`scripts/localenv.sh upstream-topology ${action} failed (${code}):\n${stderr}`)),
    );
  });
}

/** Builds the upstream operator when it is missing, installs its CRDs and starts it (idempotent). */
export const startUpstreamTopology = (options: UpstreamTopologyOptions = {}): Promise<void> =>
  localenv("up", options);

/** Stops the upstream operator and restores the project's rabbitmq.com CRDs. */
export const stopUpstreamTopology = (): Promise<void> => localenv("down");

/** The upstream operator's log so far (JSON lines). */
export function upstreamTopologyLog(): string {
  try {
    return readFileSync(`${localEnv().LOCALENV_STATE}/logs/upstream-topology.log`, "utf8");
  } catch {
    return "";
  }
}
