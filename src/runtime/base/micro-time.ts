/** Kubernetes MicroTime: RFC 3339 with exactly six fractional digits, e.g. 2026-01-01T00:00:00.123000Z. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}
