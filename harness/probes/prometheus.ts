// The operator's /metrics text, read into samples, and the few sums the benchmark takes of them.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const line = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? ([^ ]+)(?: \d+)?$/;
const label = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const raw of text.split("\n")) {
    if (raw.startsWith("#") || raw.trim() === "") continue;
    const m = line.exec(raw);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? "").matchAll(label)) labels[l[1] ?? ""] = (l[2] ?? "").replace(/\\(.)/g, "$1");
    samples.push({ name: m[1] ?? "", labels, value: Number(m[3]) });
  }
  return samples;
}

/** The sum of the series of `name` whose labels hold every pair of `where` (a list of values: any of them). */
export function sum(samples: Sample[], name: string, where: Record<string, string | string[]> = {}): number {
  let total = 0;
  for (const s of samples) {
    if (s.name !== name) continue;
    const matches = Object.entries(where).every(([k, v]) =>
      Array.isArray(v) ? v.includes(s.labels[k] ?? "") : s.labels[k] === v,
    );
    if (matches) total += s.value;
  }
  return total;
}

/** The distinct values of one label across the series of `name`. */
export function labelValues(samples: Sample[], name: string, key: string): string[] {
  return [...new Set(samples.filter((s) => s.name === name).map((s) => s.labels[key] ?? ""))].sort();
}
