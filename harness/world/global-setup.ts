import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

// Brings the local environment up once per test run, or reuses one that already runs, and stops it
// afterwards only if this run started it.
const script = fileURLToPath(new URL("../../scripts/localenv.sh", import.meta.url));

function localenv(...args: string[]): number {
  const result = spawnSync("bash", [script, ...args], { stdio: "inherit" });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

/**
 * Whether any part of the environment runs. A part stopped for an outage test (the chaos suite stops
 * RabbitMQ, OpenBao or the management kube-apiserver for a while) leaves an environment another run
 * uses: this run then starts what is missing and must not take the whole environment down at its end.
 */
function anyPartRunning(): boolean {
  const result = spawnSync("bash", [script, "status"], { encoding: "utf8" });
  return / running {2}pid /.test(result.stdout ?? "");
}

export default function setup(): () => void {
  // Started by this run only when nothing ran before it; a partial environment is completed by `up`.
  const startedHere = !anyPartRunning();
  if (localenv("status", "--quiet") !== 0 && localenv("up") !== 0) {
    // Stop the parts that did start, so that a failed run leaves no process behind.
    if (startedHere) localenv("down");
    throw new Error("scripts/localenv.sh up failed; its message above names the part and its log");
  }
  // An upstream topology operator left running by a run that was killed would serve the rabbitmq.com
  // objects beside the built-in controller of the other tests: it is stopped (the e2e that needs it
  // starts it again).
  const upstream = spawnSync("bash", [script, "upstream-topology", "status"], { encoding: "utf8" });
  if (upstream.status === 0 && localenv("upstream-topology", "down") !== 0) {
    throw new Error("scripts/localenv.sh upstream-topology down failed");
  }
  // In CI the upstream operator (for e2e/upstream-backend.itest.ts) builds in the background while the
  // files before it run, rather than for minutes in that file's own set-up.
  if (process.env["CI"] && localenv("upstream-topology", "prebuild") !== 0) {
    throw new Error("scripts/localenv.sh upstream-topology prebuild failed");
  }
  // Likewise the nodes' kubelet and kube-scheduler, and Debian's containerd (for e2e/node-chart.itest.ts).
  if (process.env["CI"] && localenv("node", "prebuild") !== 0) {
    throw new Error("scripts/localenv.sh node prebuild failed");
  }
  return () => {
    if (startedHere) localenv("down");
  };
}
