import { afterEach, describe, expect, it, vi } from "vitest";
import { build } from "../base/build.ts";
import { podName, runProgram } from "./bootstrap.ts";
import { runtimeSettings } from "./config.ts";

afterEach(() => vi.restoreAllMocks());

/** What a run with `argv` writes to stdout, and its exit code; a program that would start throws. */
async function run(argv: string[]): Promise<{ code: number; stdout: string }> {
  let stdout = "";
  vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
    stdout += String(chunk);
    return true;
  });
  const code = await runProgram(
    {
      name: "vhost-broker",
      settings: runtimeSettings,
      clusters: () => {
        throw new Error("started");
      },
      controllers: () => undefined,
    },
    argv,
    {},
  );
  return { code, stdout };
}

describe("runProgram", () => {
  it("prints the version for --version and exits 0, before any setting or cluster is read", async () => {
    expect(await run(["--version", "--no-such-setting"])).toEqual({
      code: 0,
      stdout: `vhost-broker ${build.version} (revision ${build.revision})\n`,
    });
  });

  it("names --version in --help", async () => {
    const help = await run(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("vhost-broker --version\n");
  });
});

describe("podName", () => {
  it("is the downward API's POD_NAME, else the hostname", () => {
    expect(podName({ POD_NAME: "vb-vhost-broker-7d9c-x2x4q" }, "node-1")).toBe("vb-vhost-broker-7d9c-x2x4q");
    expect(podName({ POD_NAME: "" }, "node-1")).toBe("node-1");
    expect(podName({}, "node-1")).toBe("node-1");
  });
});
