// Management API paths. Every name is one percent-encoded path segment: the default vhost "/" is
// %2F, and a name holding "%", "+", "#" or "?" must reach the broker unchanged.

/** Percent-encodes one path segment; "." and ".." are encoded too so no client or proxy folds them. */
export function encodeSegment(segment: string): string {
  if (segment === "." || segment === "..") return segment.replaceAll(".", "%2E");
  return encodeURIComponent(segment).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/** `/api/<resource>/<encoded segment>/…`; the resource name itself is a fixed literal. */
export function apiPath(resource: string, ...segments: string[]): string {
  return ["/api", resource, ...segments.map(encodeSegment)].join("/");
}

/** Appends a query string built from the defined entries. */
export function withQuery(path: string, query: Record<string, string | undefined>): string {
  const entries = Object.entries(query).filter((e): e is [string, string] => e[1] !== undefined);
  return entries.length === 0 ? path : `${path}?${new URLSearchParams(entries).toString()}`;
}
