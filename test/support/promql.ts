// A small evaluator for the PromQL forms the chart's PrometheusRule uses, so that the tests can ask
// whether an alert's expression holds over real scrapes of the operator's /metrics:
//   sum|max|min by (labels) (expr)   rate|increase(selector[range])   time() - expr
//   name{l="v", l=~"a|b", l!="v"}    expr > | < | == | >= | <= | != number
// Scrapes carry their real times; an expression is evaluated at the last scrape, a range selector
// sees the samples within the range before it, and rate is (last - first) / their time apart (no
// extrapolation, no counter resets: enough to tell zero from not zero). Anything else is refused.

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

type Value = { kind: "scalar"; value: number } | { kind: "vector"; samples: Sample[] };

const tokenPattern =
  /\s*(=~|!=|==|>=|<=|[(){}[\],=<>-]|"(?:[^"\\]|\\.)*"|[0-9]+(?:\.[0-9]+)?[smhd]?|[a-zA-Z_:][a-zA-Z0-9_:]*)/y;

function tokenize(expr: string): string[] {
  const tokens: string[] = [];
  tokenPattern.lastIndex = 0;
  while (tokenPattern.lastIndex < expr.trimEnd().length) {
    const m = tokenPattern.exec(expr);
    if (!m?.[1]) throw new Error(`cannot read "${expr.slice(tokenPattern.lastIndex)}"`);
    tokens.push(m[1]);
  }
  return tokens;
}

const durations: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

/** The samples of an expression at the last scrape: an alert's expression fires when there are any. */
export function evaluate(expr: string, scrapes: readonly Scrape[]): Sample[] {
  const last = scrapes[scrapes.length - 1];
  if (!last) throw new Error("no scrapes");
  const tokens = tokenize(expr);
  let i = 0;
  const peek = () => tokens[i];
  const next = () => tokens[i++] ?? "";
  const expect = (t: string) => {
    const got = next();
    if (got !== t) throw new Error(`expected "${t}", found "${got}" in ${expr}`);
  };

  /** Reads a selector's matchers; the result selects its samples from any scrape. */
  const selector = (name: string): ((at: Scrape) => Sample[]) => {
    const matchers: [string, string, string][] = [];
    if (peek() === "{") {
      next();
      while (peek() !== "}") {
        const label = next();
        const op = next();
        const value = JSON.parse(next()) as string;
        matchers.push([label, op, value]);
        if (peek() === ",") next();
      }
      next();
    }
    const matches = (s: Sample) =>
      matchers.every(([label, op, value]) => {
        const v = s.labels[label] ?? "";
        if (op === "=") return v === value;
        if (op === "!=") return v !== value;
        if (op === "=~") return new RegExp(`^(?:${value})$`).test(v);
        throw new Error(`matcher ${op} is not supported`);
      });
    return (at) => (at.samples.get(name) ?? []).filter(matches);
  };

  const primary = (): Value => {
    const t = next();
    if (/^[0-9]/.test(t)) return { kind: "scalar", value: Number(t) };
    if (t === "(") {
      const inner = comparison();
      expect(")");
      return inner;
    }
    if (t === "time") {
      expect("(");
      expect(")");
      return { kind: "scalar", value: last.at };
    }
    if (t === "sum" || t === "max" || t === "min") {
      let by: string[] | undefined;
      if (peek() === "by") {
        next();
        expect("(");
        by = [];
        while (peek() !== ")") {
          by.push(next());
          if (peek() === ",") next();
        }
        next();
      }
      expect("(");
      const inner = comparison();
      expect(")");
      if (inner.kind !== "vector") throw new Error(`${t} needs a vector`);
      return { kind: "vector", samples: aggregate(t, by ?? [], inner.samples) };
    }
    if (t === "rate" || t === "increase") {
      expect("(");
      const select = selector(next());
      expect("[");
      const range = next();
      expect("]");
      expect(")");
      const seconds = Number(range.slice(0, -1)) * (durations[range.slice(-1)] ?? NaN);
      const window = scrapes.filter((s) => s.at >= last.at - seconds);
      const samples = select(last).flatMap((sample) => {
        const key = JSON.stringify(sample.labels);
        const points = window.flatMap((s) => {
          const found = select(s).find((x) => JSON.stringify(x.labels) === key);
          return found ? [{ at: s.at, value: found.value }] : [];
        });
        const first = points[0];
        const end = points[points.length - 1];
        if (!first || !end || end.at === first.at) return [];
        const delta = end.value - first.value;
        return [{ labels: sample.labels, value: t === "rate" ? delta / (end.at - first.at) : delta }];
      });
      return { kind: "vector", samples };
    }
    if (/^[a-zA-Z_:]/.test(t)) return { kind: "vector", samples: selector(t)(last) };
    throw new Error(`unexpected "${t}" in ${expr}`);
  };

  const difference = (): Value => {
    let left = primary();
    while (peek() === "-") {
      next();
      const right = primary();
      left = arithmetic(left, right);
    }
    return left;
  };

  const comparison = (): Value => {
    const left = difference();
    const op = peek();
    if (!op || ![">", "<", "==", ">=", "<=", "!="].includes(op)) return left;
    next();
    const right = difference();
    if (left.kind !== "vector" || right.kind !== "scalar")
      throw new Error("only vector <op> number is supported");
    const holds = (v: number) =>
      op === ">"
        ? v > right.value
        : op === "<"
          ? v < right.value
          : op === "=="
            ? v === right.value
            : op === ">="
              ? v >= right.value
              : op === "<="
                ? v <= right.value
                : v !== right.value;
    return { kind: "vector", samples: left.samples.filter((s) => holds(s.value)) };
  };

  const result = comparison();
  if (i !== tokens.length) throw new Error(`unexpected "${peek()}" in ${expr}`);
  if (result.kind !== "vector") throw new Error("an alert expression is a vector");
  return result.samples;
}

function arithmetic(left: Value, right: Value): Value {
  if (left.kind === "scalar" && right.kind === "vector") {
    return {
      kind: "vector",
      samples: right.samples.map((s) => ({ labels: s.labels, value: left.value - s.value })),
    };
  }
  if (left.kind === "vector" && right.kind === "scalar") {
    return {
      kind: "vector",
      samples: left.samples.map((s) => ({ labels: s.labels, value: s.value - right.value })),
    };
  }
  throw new Error("only scalar - vector and vector - scalar are supported");
}

function aggregate(op: string, by: string[], samples: Sample[]): Sample[] {
  const groups = new Map<string, Sample>();
  for (const s of samples) {
    const labels = Object.fromEntries(by.filter((l) => l in s.labels).map((l) => [l, s.labels[l] ?? ""]));
    const key = JSON.stringify(labels);
    const seen = groups.get(key);
    if (!seen) groups.set(key, { labels, value: s.value });
    else
      seen.value =
        op === "sum"
          ? seen.value + s.value
          : op === "max"
            ? Math.max(seen.value, s.value)
            : Math.min(seen.value, s.value);
  }
  return [...groups.values()];
}
