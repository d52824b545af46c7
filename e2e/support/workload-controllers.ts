// Deployments and ReplicaSets on the management cluster for one test file: a kube-controller-manager
// running only their two controllers, in a working directory and log of its own, stopped by its pid
// (the directory is removed then, unless a test of the file failed).
// The environment's own controller manager runs neither (no pods without nodes); the nodes part
// (scripts/localenv/node.sh) runs both, so while it is up this one is not started: two would make
// every pod twice. Pods stay Pending (no scheduler), which is all a test of who reads a Secret needs.
import { spawn, type ChildProcess } from "node:child_process";
import { openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { localEnv } from "../../harness/world/env.ts";
import { scratchFolder } from "../../harness/world/scratch.ts";

// Made on import, while the test file is collected: it watches that file's tests.
const workdir = scratchFolder(
  "vb-workload-controllers-",
  "workload-controllers: the kube-controller-manager log",
);

export class WorkloadControllers {
  readonly #child: ChildProcess | undefined;

  private constructor(child: ChildProcess | undefined) {
    this.#child = child;
  }

  /** Starts the controllers unless the nodes part runs them already. */
  static start(): WorkloadControllers {
    const env = localEnv() as unknown as Record<string, string>;
    const state = env["LOCALENV_STATE"] ?? "";
    if (nodesRun(state)) return new WorkloadControllers(undefined);
    const log = openSync(join(workdir.path, "kube-controller-manager.log"), "a");
    const child = spawn(
      join(env["LOCALENV_K8S_BIN"] ?? "", "kube-controller-manager"),
      [
        `--kubeconfig=${state}/management.kubeconfig`,
        "--leader-elect=false",
        "--use-service-account-credentials=false",
        "--controllers=deployment-controller,replicaset-controller",
        "--secure-port=0",
      ],
      { cwd: workdir.path, stdio: ["ignore", log, log] },
    );
    return new WorkloadControllers(child);
  }

  async stop(): Promise<void> {
    const child = this.#child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
    workdir.release();
  }
}

/** Whether the nodes part's controller manager runs (its pid file names a live process). */
function nodesRun(state: string): boolean {
  try {
    const pid = Number(readFileSync(`${state}/pids/node-controller-manager.pid`, "utf8").trim());
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
