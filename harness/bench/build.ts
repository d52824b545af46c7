// The operator the benchmark measures is the one the image runs: JavaScript that `npm run build` writes
// to dist/ from the sources. Started from its TypeScript sources instead, Node strips the types as it
// loads each module, and that stripper alone holds about 17 MiB of resident memory.
import { execFile } from "node:child_process";
import { rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const root = fileURLToPath(new URL("../../", import.meta.url));
const tsc = fileURLToPath(new URL("../../node_modules/typescript/bin/tsc", import.meta.url));

/** Builds dist/ afresh, as `npm run build` does. */
export async function buildOperator(): Promise<void> {
  rmSync(`${root}/dist`, { recursive: true, force: true });
  await promisify(execFile)(process.execPath, [tsc, "-p", "tsconfig.build.json"], { cwd: root });
}
