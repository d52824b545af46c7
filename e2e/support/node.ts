// The local environment's nodes (`scripts/localenv.sh node`, scripts/localenv/node.sh) for tests that run
// pods under a kubelet: start them (waiting for the install and build CI starts in the background),
// import an image into every node's containerd, and the helm post-renderer these nodes need.
import { spawn } from "node:child_process";
import { chmodSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const script = fileURLToPath(new URL("../../scripts/localenv.sh", import.meta.url));
const renderer = fileURLToPath(new URL("../../harness/charts/node-post-renderer.ts", import.meta.url));

/** A cold kubelet build takes minutes on a 2-core machine; a hook that starts the nodes allows this much. */
export const nodeStartTimeoutMs = 30 * 60_000;

/** Where a pod's image is found: the name images are imported under (no registry is reached). */
export const localImageRepository = "localenv.invalid/vhost-broker";

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `scripts/localenv.sh node ARGS`; its progress lines go to this process's stderr. */
function node(args: string[], echo = true): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", [script, "node", ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
      if (echo) process.stderr.write(chunk);
    });
    child.once("error", reject);
    child.once("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

async function must(args: string[]): Promise<string> {
  const run = await node(args);
  if (run.code !== 0) {
    throw new Error(`scripts/localenv.sh node ${args.join(" ")} failed (${run.code}):\n${run.stderr}`);
  }
  return run.stdout;
}

/** Whether every part of the nodes runs. */
export async function nodesRunning(): Promise<boolean> {
  return (await node(["status"], false)).code === 0;
}

/** Builds and installs what is missing (or waits for the background build) and starts the nodes. */
export async function startNodes(): Promise<void> {
  await must(["up"]);
}

/** Stops the nodes: their pods, kubelets, containerds, the scheduler and controller manager. */
export async function stopNodes(): Promise<void> {
  await must(["down"]);
}

/** Imports every tag of an OCI layout into each node's containerd as `<repository>:<tag>`. */
export async function importImage(layout: string, repository = localImageRepository): Promise<void> {
  await must(["import", layout, repository]);
}

export interface NodeSettings {
  count: number;
  /** The key of the taint every node carries (NoSchedule); a pod that runs there tolerates it. */
  taintKey: string;
}

export async function nodeSettings(): Promise<NodeSettings> {
  const vars: Record<string, string> = {};
  for (const line of (await must(["env"])).split("\n")) {
    const m = /^export ([A-Z0-9_]+)=(.*)$/.exec(line);
    if (m?.[1] && m[2] !== undefined) vars[m[1]] = m[2];
  }
  const count = Number(vars["LOCALENV_NODE_COUNT"]);
  const taintKey = vars["LOCALENV_NODE_TAINT_KEY"];
  if (!count || !taintKey) throw new Error("scripts/localenv.sh node env named no nodes");
  return { count, taintKey };
}

/**
 * Writes the post-renderer (harness/charts/node-post-renderer.ts, run by this process's Node) as an executable into
 * `dir`, for `helm --post-renderer`, and returns its path.
 */
export function writePostRenderer(dir: string): string {
  const path = `${dir}/node-post-renderer`;
  const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
  writeFileSync(path, `#!/bin/sh\nexec ${quote(process.execPath)} ${quote(renderer)}\n`);
  chmodSync(path, 0o755);
  return path;
}
