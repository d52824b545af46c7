// The operator's API writes by what they write (vhost_broker_api_writes_total), per order, for the
// phases that create and rotate orders: one table whose rows are a resource, subresource and verb, named
// as the order's life names them (its status, its finalizer, a child's apply, an Event, the delivered
// Secret), so that a write made twice shows where it is made.
import { rabbitMQVhostKind } from "../../src/api/index.ts";
import type { Sample } from "../probes/prometheus.ts";
import type { Counters } from "./backend.ts";
import type { BenchReport } from "./run.ts";
import { runLabel } from "./table.ts";

const ORDER = `${rabbitMQVhostKind.plural}.${rabbitMQVhostKind.group}`;
const LEASE = "leases.coordination.k8s.io";

/** The key of one series: `resource subresource verb`, "-" for the object itself. */
export const writeKey = (resource: string, subresource: string, verb: string) =>
  `${resource} ${subresource || "-"} ${verb}`;

export function writesByTarget(samples: Sample[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of samples) {
    if (s.name !== "vhost_broker_api_writes_total") continue;
    const key = writeKey(s.labels["resource"] ?? "", s.labels["subresource"] ?? "", s.labels["verb"] ?? "");
    out[key] = (out[key] ?? 0) + s.value;
  }
  return out;
}

/** What a write is in the life of an order; the key itself for one the order's life does not name. */
export function writeMeaning(key: string): string {
  const [resource = "", subresource = "", verb = ""] = key.split(" ");
  const child = resource.endsWith(".rabbitmq.com") ? resource.split(".")[0]!.replace(/s$/, "") : undefined;
  if (resource === ORDER) {
    if (subresource === "status") return "order status";
    if (subresource === "-" && (verb === "patch" || verb === "update")) return "order finalizer add/remove";
  }
  if (child) {
    if (subresource === "status") return `child status (${child})`;
    if (verb === "apply") return `child apply (${child})`;
    if (verb === "patch" || verb === "update") return `child finalizer add/remove (${child})`;
    if (verb === "delete") return `child delete (${child})`;
  }
  if (resource === "events" || resource === "events.events.k8s.io") return `Event ${verb}`;
  if (resource === "secrets") return `Secret ${verb}`;
  if (resource === LEASE) return "Lease (leader election, not the orders')";
  return key;
}

export interface WritesColumn {
  label: string;
  /** Per order. */
  counters: Counters;
}

/**
 * One table: a row per write the columns made, the most frequent first, then the orders' total (the
 * Lease apart) and, where another process served the topology (upstream's operator), its writes.
 */
export function writesTable(columns: WritesColumn[]): string {
  const keys = [...new Set(columns.flatMap((c) => Object.keys(c.counters.apiWritesBy)))];
  const weight = (key: string) => Math.max(...columns.map((c) => c.counters.apiWritesBy[key] ?? 0));
  keys.sort((a, b) => weight(b) - weight(a) || a.localeCompare(b));
  const cell = (v: number) => (v === 0 ? "0" : v.toFixed(2));
  const ownWrites = (c: Counters) =>
    Object.entries(c.apiWritesBy).reduce((sum, [k, v]) => (k.startsWith(`${LEASE} `) ? sum : sum + v), 0);
  const body = keys
    .filter((key) => weight(key) >= 0.005)
    .map((key) => [
      writeMeaning(key),
      `\`${key}\``,
      ...columns.map((c) => cell(c.counters.apiWritesBy[key] ?? 0)),
    ]);
  body.push(["orders' writes, the Lease apart", "", ...columns.map((c) => cell(ownWrites(c.counters)))]);
  const others = columns.map((c) => c.counters.apiWrites - ownWrites(c.counters));
  if (others.some((v) => v >= 0.005))
    body.push(["written by another process (the topology operator)", "", ...others.map(cell)]);
  const header = ["write", "resource subresource verb", ...columns.map((c) => c.label)];
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i]?.length ?? 0)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(" | ")} |`;
  return [line(header), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...body.map(line)].join("\n");
}

/** The writes table of a whole run: the cold start's and the rotation's (sweep included) of each run. */
export function runWritesTable(r: BenchReport): string {
  const columns = r.runs.flatMap((run): WritesColumn[] =>
    "coldStart" in run
      ? [
          { label: `${runLabel(r, run)} cold start`, counters: run.coldStart.perOrder },
          { label: `${runLabel(r, run)} rotation`, counters: run.rotation.perOrder },
        ]
      : [],
  );
  return columns.length > 0 ? `API writes per order by what they write:\n\n${writesTable(columns)}` : "";
}
