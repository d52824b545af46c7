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

export default function setup(): () => void {
  const alreadyRunning = localenv("status", "--quiet") === 0;
  if (!alreadyRunning && localenv("up") !== 0) {
    // Stop the parts that did start, so that a failed run leaves no process behind.
    localenv("down");
    throw new Error("scripts/localenv.sh up failed; its message above names the part and its log");
  }
  return () => {
    if (!alreadyRunning) localenv("down");
  };
}
