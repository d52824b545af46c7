// The start-up guards of the local environment's process helpers (scripts/localenv/lib.sh), run in
// bash against a private state directory.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

const lib = fileURLToPath(new URL("../scripts/localenv/lib.sh", import.meta.url));
let state = "";

beforeEach(() => {
  state = mkdtempSync(join(tmpdir(), "localenv-start-"));
});

afterEach(() => {
  rmSync(state, { recursive: true, force: true });
});

function helpers(script: string, cwd?: string): { status: number | null; stderr: string } {
  const result = spawnSync("bash", ["-c", `STATE='${state}'; source '${lib}'; ${script}`], {
    encoding: "utf8",
    timeout: 20_000,
    ...(cwd === undefined ? {} : { cwd }),
  });
  return { status: result.status, stderr: result.stderr };
}

describe("localenv start", () => {
  it("refuses a port in the kernel's ephemeral range, where a client connection can take it", () => {
    const [low, high] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/);
    const port = Number(low) + 1;
    const run = helpers(`start part ${port} -- sleep 30`);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(
      `localenv: part: port ${port} lies in the kernel's ephemeral port range (${low}-${high})`,
    );
    expect(run.stderr).toContain("set its LOCALENV_*_PORT below that range");
  });

  it("names a part that dies during start-up and shows the end of its log", () => {
    const run = helpers(
      `start part -- bash -c 'echo "listen failed: dist_port_already_used"; exit 3'; wait_until part 10 false`,
    );
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`localenv: the last lines of ${state}/logs/part.log:`);
    expect(run.stderr).toContain("  | listen failed: dist_port_already_used");
    expect(run.stderr).toContain(`localenv: part exited during start-up; see ${state}/logs/part.log`);
  });

  it("names a part that does not become ready in time", () => {
    const run = helpers(
      // die exits the shell; the trap stops the part that still runs.
      `trap 'stop part' EXIT; start part -- bash -c 'echo still starting; sleep 30'; wait_until part 1 false`,
    );
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("  | still starting");
    expect(run.stderr).toContain(`localenv: part did not become ready within 1s; see ${state}/logs/part.log`);
  });

  it("runs a part in its state folder, never in the working directory of whoever starts it", () => {
    // The starter's checkout, as a test that restarts the broker has it.
    const checkout = join(state, "checkout");
    mkdirSync(checkout);
    const run = helpers(
      `start part -- bash -c 'pwd -P' && wait && start broker -C '${state}/broker' -- bash -c 'pwd -P' && wait`,
      checkout,
    );
    expect(run).toEqual({ status: 0, stderr: "" });
    expect(readFileSync(join(state, "logs/part.log"), "utf8")).toBe(`${state}\n`);
    expect(readFileSync(join(state, "logs/broker.log"), "utf8")).toBe(`${state}/broker\n`);
  });
});
