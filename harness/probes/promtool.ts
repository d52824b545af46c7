// Debian's promtool (prometheus 2.42) for the alert tests: `promtool test rules` over rule test files,
// and over real scrapes of the operator's /metrics. `scripts/localenv.sh up` installs it; an environment
// that was up before it was part of `up` gets it from `scripts/localenv.sh promtool` on first use.
import { execFile, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import * as yaml from "yaml";

const run = promisify(execFile);
const root = fileURLToPath(new URL("../../", import.meta.url));

let binary: string | undefined;

/** PROMTOOL from the environment or .localenv/env.sh, else Debian's, installed when missing. */
export function promtoolBinary(): string {
  if (binary) return binary;
  const state = process.env["LOCALENV_STATE"] ?? `${root}.localenv`;
  const fromEnvFile = existsSync(`${state}/env.sh`)
    ? /^export PROMTOOL=(.+)$/m.exec(readFileSync(`${state}/env.sh`, "utf8"))?.[1]
    : undefined;
  binary = [process.env["PROMTOOL"], fromEnvFile, "/usr/bin/promtool"].find((c) => !!c && existsSync(c));
  if (!binary) {
    const installed = spawnSync("bash", [`${root}scripts/localenv.sh`, "promtool"], { encoding: "utf8" });
    if (installed.status !== 0) throw new Error(`scripts/localenv.sh promtool failed:\n${installed.stderr}`);
    binary = installed.stdout.trim().split("\n").pop();
  }
  if (!binary) throw new Error("no promtool");
  return binary;
}

export interface PromtoolResult {
  ok: boolean;
  output: string;
}

/** `promtool <args>` in `cwd`; a non-zero exit is a result, not an error. */
export async function promtool(args: string[], cwd: string): Promise<PromtoolResult> {
  try {
    const { stdout, stderr } = await run(promtoolBinary(), args, { cwd, maxBuffer: 16 * 1024 * 1024 });
    return { ok: true, output: stdout + stderr };
  } catch (error) {
    const { stdout = "", stderr = "", code } = error as { stdout?: string; stderr?: string; code?: unknown };
    if (typeof code !== "number") throw error;
    return { ok: false, output: stdout + stderr };
  }
}

export type Labels = Record<string, string>;
export interface Sample {
  labels: Labels;
  value: number;
}
export interface Scrape {
  /** Seconds since the epoch. */
  at: number;
  samples: Map<string, Sample[]>;
}

/** Parses Prometheus's text format; `target` labels are added as Prometheus adds job, namespace... */
export function parseScrape(text: string, at: number, target: Labels = {}): Scrape {
  const samples = new Map<string, Sample[]>();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (!m) continue;
    const labels: Labels = { ...target };
    for (const l of (m[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[l[1] ?? ""] = (l[2] ?? "").replace(/\\"/g, '"').replace(/\\\\/g, "\\");
    }
    const name = m[1] ?? "";
    samples.set(name, [...(samples.get(name) ?? []), { labels, value: Number(m[3]) }]);
  }
  return { at, samples };
}

const quote = (text: string) => `"${text.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
const seriesName = (name: string, labels: Labels) =>
  `${name}{${Object.entries(labels)
    .filter(([, v]) => v !== "")
    .map(([k, v]) => `${k}=${quote(v)}`)
    .join(", ")}}`;
const valueText = (v: number) =>
  Number.isNaN(v) ? "NaN" : v === Infinity ? "Inf" : v === -Infinity ? "-Inf" : `${v}`;

/**
 * Whether `expr` has a sample with `labels` (a subset of its labels) at the last scrape, evaluated by
 * promtool over the scrapes: each scrape is a step of one second from the first (so `time()` counts
 * seconds from the first scrape), a step without one repeats nothing, as between real scrapes.
 */
export async function holds(expr: string, scrapes: readonly Scrape[], labels: Labels = {}): Promise<boolean> {
  const first = scrapes[0];
  if (!first) throw new Error("no scrapes");
  const steps: number[] = [];
  for (const s of scrapes)
    steps.push(Math.max((steps[steps.length - 1] ?? -1) + 1, Math.round(s.at - first.at)));
  const last = steps[steps.length - 1] ?? 0;
  // Only the metrics the expression names: a scrape holds hundreds of series.
  const named = new Set(expr.match(/[a-zA-Z_:][a-zA-Z0-9_:]*/g) ?? []);
  const series = new Map<string, (number | undefined)[]>();
  scrapes.forEach((scrape, i) => {
    for (const [name, samples] of scrape.samples) {
      if (!named.has(name)) continue;
      for (const sample of samples) {
        const key = seriesName(name, sample.labels);
        const values = series.get(key) ?? new Array<number | undefined>(last + 1).fill(undefined);
        values[steps[i] ?? 0] = sample.value;
        series.set(key, values);
      }
    }
  });
  const filter = Object.entries(labels).reduce(
    (vector, [k, v]) => `label_replace(${vector}, ${quote(k)}, ${quote(v)}, "", "")`,
    "vector(1)",
  );
  const selected = Object.keys(labels).length
    ? `(${expr}) and on (${Object.keys(labels).join(", ")}) ${filter}`
    : `(${expr})`;
  const test = {
    rule_files: [],
    // promtool loads the series and evaluates in steps of this interval: it must be the series' own.
    evaluation_interval: "1s",
    tests: [
      {
        interval: "1s",
        input_series: [...series].map(([name, values]) => ({
          series: name,
          values: values.map((v) => (v === undefined ? "_" : valueText(v))).join(" "),
        })),
        promql_expr_test: [
          {
            expr: `clamp_max(count(${selected}), 1) or vector(0)`,
            eval_time: `${last}s`,
            exp_samples: [{ labels: "{}", value: 1 }],
          },
        ],
      },
    ],
  };
  const dir = mkdtempSync(`${tmpdir()}/vhost-broker-promtool-`);
  try {
    writeFileSync(`${dir}/test.yaml`, yaml.stringify(test));
    const result = await promtool(["test", "rules", "test.yaml"], dir);
    if (result.ok) return true;
    if (/got:\s*\{\} 0E\+00/.test(result.output)) return false;
    throw new Error(`promtool could not evaluate ${expr}:\n${result.output}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
