// Go's time.ParseDuration grammar, the one the CRDs' duration patterns spell out: an optional sign,
// then "0" or one or more decimal numbers each with a unit (ns, us, µs, μs, ms, s, m, h).

const units: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};
const grammar = /^([-+]?)(0|(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:ns|us|µs|μs|ms|s|m|h))+)$/;
const part = /([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h)/g;

/** Go's time.Duration holds int64 nanoseconds; anything longer (about 292 years) does not parse there. */
const MAX_MS = 9_223_372_036_854.775;

/** A Go duration (`1h30m`, `0`, `-90s`, `1.5h`, `250us`) in whole milliseconds; undefined when it does not parse. */
export function parseDuration(text: string): number | undefined {
  const m = grammar.exec(text);
  if (!m) return undefined;
  let total = 0;
  for (const [, amount, unit] of (m[2] ?? "").matchAll(part))
    total += Number(amount) * (units[unit ?? ""] ?? NaN);
  if (!(total <= MAX_MS)) return undefined;
  // "+ 0" turns the -0 of "-0s" into 0.
  return (m[1] === "-" ? -Math.round(total) : Math.round(total)) + 0;
}
