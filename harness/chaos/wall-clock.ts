// A process's wall clock stepped by hand, as a wrong NTP step or an operator's `date -s` steps a node's:
// Debian's libfaketime in LD_PRELOAD, reading the offset from a file of the process's own (`+0`,
// `-300`: seconds). Only the wall clock moves (FAKETIME_DONT_FAKE_MONOTONIC): Date.now() follows the
// file, performance.now(), process.hrtime and Node's timers do not. The library reads the file again
// at most once a second (FAKETIME_CACHE_DURATION), so a step takes effect within about two.
// `scripts/localenv.sh up` installs it; an environment that was up before it was part of `up` gets it
// from `scripts/localenv.sh faketime` on first use.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));

let library: string | undefined;

/**
 * libfaketime.so.1: LIBFAKETIME from the environment or .localenv/env.sh, else Debian's, installed when
 * missing. Throws when there is none: ld.so would only warn and run the process on the real clock.
 */
export function libfaketimePath(): string {
  if (library) return library;
  const state = process.env["LOCALENV_STATE"] ?? `${root}.localenv`;
  const fromEnvFile = existsSync(`${state}/env.sh`)
    ? /^export LIBFAKETIME=(.+)$/m.exec(readFileSync(`${state}/env.sh`, "utf8"))?.[1]
    : undefined;
  const debian = `/usr/lib/${process.arch === "arm64" ? "aarch64" : "x86_64"}-linux-gnu/faketime/libfaketime.so.1`;
  library = [process.env["LIBFAKETIME"], fromEnvFile, debian].find((c) => !!c && existsSync(c));
  if (!library) {
    const installed = spawnSync("bash", [`${root}scripts/localenv.sh`, "faketime"], { encoding: "utf8" });
    const path = installed.stdout.trim().split("\n").pop();
    if (installed.status !== 0 || !path || !existsSync(path)) {
      throw new Error(
        `libfaketime is missing (Debian's libfaketime package; scripts/localenv.sh faketime installs it, as root): ` +
          `scripts/localenv.sh faketime exited with ${installed.status}:\n${installed.stderr}`,
      );
    }
    library = path;
  }
  return library;
}

/** The environment that puts a process's wall clock under `offsetFile`, which it writes as `+0`. */
export function steppableClockEnv(offsetFile: string): Record<string, string> {
  writeFileSync(offsetFile, "+0\n");
  return {
    LD_PRELOAD: libfaketimePath(),
    FAKETIME_TIMESTAMP_FILE: offsetFile,
    FAKETIME_CACHE_DURATION: "1",
    FAKETIME_DONT_FAKE_MONOTONIC: "1",
  };
}

/** Sets the wall clock of the process reading `offsetFile` `seconds` off the real one (0: back to it). */
export function stepWallClock(offsetFile: string, seconds: number): void {
  writeFileSync(offsetFile, `${seconds < 0 ? "-" : "+"}${Math.abs(Math.round(seconds))}\n`);
}
