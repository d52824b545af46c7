import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, posix, relative } from "node:path";
import ts from "typescript";

// The design's dependency rules, checked on the import statements of the files: between components
// under src/, and between the rooms of the tests and tools beside it. A component is a folder directly
// under src/; files beside them (main.ts) are the composition root and bound by no rule.

export const components = [
  "api",
  "runtime",
  "clusters",
  "orders",
  "rabbitmq",
  "mariadb",
  "backup",
  "topology",
  "sql",
  "external",
  "gatekeeper",
  "operator",
] as const;

type Component = (typeof components)[number];

const allBut = (...allowed: Component[]): Component[] => components.filter((c) => !allowed.includes(c));

/** The components each component must not import (itself never counts). */
export const forbidden: Partial<Record<Component, Component[]>> = {
  runtime: allBut("runtime", "clusters"),
  clusters: allBut("runtime", "clusters"),
  api: allBut("api"),
  gatekeeper: allBut("gatekeeper", "api", "runtime"),
  orders: ["topology", "sql", "external"],
  // The two built-in backends share their engine (external) and runtime, never each other.
  topology: ["orders", "sql"],
  sql: ["orders", "topology"],
  // The engine of resources outside Kubernetes knows no backend: each brings its handlers.
  external: allBut("external", "api", "runtime", "gatekeeper"),
  backup: ["orders", "topology"],
  // What RabbitMQ means, shared by the topology controller and the RabbitMQ order leg.
  rabbitmq: allBut("rabbitmq", "runtime", "api"),
  // What MariaDB's SQL means (quoting names) and how a connection to it is opened (TLS, CA, client
  // certificate, deadlines), shared by the SQL controller and the MariaDB order leg; of the runtime
  // it takes only base helpers every component reads with (a port number).
  mariadb: allBut("mariadb", "runtime"),
};

export interface SourceFile {
  /** Path relative to the repository root, with forward slashes, e.g. src/runtime/port/kube.ts. */
  path: string;
  text: string;
}

export interface Violation {
  file: string;
  line: number;
  specifier: string;
  rule: string;
}

/** The folder directly under src/ that holds `path`, or undefined for a file outside any. */
export function componentOf(path: string): string | undefined {
  const parts = path.split("/");
  return parts[0] === "src" && parts.length > 2 ? parts[1] : undefined;
}

/** Every static, dynamic and re-export specifier of a file, with its line; comments and strings excluded. */
export function importsOf(text: string): { specifier: string; line: number }[] {
  return ts.preProcessFile(text, true, true).importedFiles.map((f) => ({
    specifier: f.fileName,
    line: text.slice(0, f.pos).split("\n").length,
  }));
}

/** The order core serves every order kind, so it imports none of their legs (src/orders/<kind>/). */
function orderCoreViolations(file: SourceFile): Violation[] {
  if (!file.path.startsWith("src/orders/core/")) return [];
  return importsOf(file.text)
    .filter(({ specifier }) => specifier.startsWith("."))
    .map(({ specifier, line }) => ({ specifier, line, to: posix.join(posix.dirname(file.path), specifier) }))
    .filter(({ to }) => to.startsWith("src/orders/") && !to.startsWith("src/orders/core/"))
    .map(({ specifier, line }) => ({
      file: file.path,
      line,
      specifier,
      rule: "the order core must not import a leg",
    }));
}

/** Each leg (src/orders/<kind>/) stands on the core alone: it imports no other leg. */
function legViolations(file: SourceFile): Violation[] {
  const leg = /^src\/orders\/([^/]+)\//.exec(file.path)?.[1];
  if (!leg || leg === "core") return [];
  return importsOf(file.text)
    .filter(({ specifier }) => specifier.startsWith("."))
    .map(({ specifier, line }) => ({ specifier, line, to: posix.join(posix.dirname(file.path), specifier) }))
    .filter(({ to }) => /^src\/orders\/[^/]+\//.test(to))
    .filter(({ to }) => !to.startsWith("src/orders/core/") && !to.startsWith(`src/orders/${leg}/`))
    .map(({ specifier, line }) => ({
      file: file.path,
      line,
      specifier,
      rule: "an order leg must not import another leg",
    }));
}

/**
 * The runtime's layers, bottom up: `base` (time, errors, logging, the write fence's contract) needs
 * nothing; the Kubernetes `port` stands on base; `leadership` (the Lease, its fence, the elector) on
 * the port; the reconcile `loop` (queue, lanes, workers, their metrics) on base alone; the `process`
 * (manager, start-up, servers, settings) puts them together. Each layer may import those it names.
 */
export const runtimeLayers: Record<string, string[]> = {
  base: [],
  port: ["base"],
  leadership: ["base", "port"],
  loop: ["base"],
  process: ["base", "port", "leadership", "loop"],
};

function runtimeLayerViolations(file: SourceFile): Violation[] {
  const match = /^src\/runtime\/(?:([^/]+)\/)?[^/]+$/.exec(file.path);
  if (!match) return [];
  const layer = match[1];
  const allowed = layer === undefined ? undefined : runtimeLayers[layer];
  if (allowed === undefined)
    return [{ file: file.path, line: 1, specifier: "", rule: "a runtime file lives in one of its layers" }];
  return importsOf(file.text)
    .filter(({ specifier }) => specifier.startsWith("."))
    .map(({ specifier, line }) => ({ specifier, line, to: posix.join(posix.dirname(file.path), specifier) }))
    .map(({ specifier, line, to }) => ({ specifier, line, target: /^src\/runtime\/([^/]+)\//.exec(to)?.[1] }))
    .filter(({ target }) => target !== undefined && target !== layer && !allowed.includes(target))
    .map(({ specifier, line, target }) => ({
      file: file.path,
      line,
      specifier,
      rule: `the runtime's ${layer} must not import its ${target}`,
    }));
}

/**
 * The rooms beside src/, and what each may import besides itself (README.md, "Where a test goes"):
 * the shared test machinery in harness/ stands on src/ alone; the tests (test/, e2e/) and the command
 * lines (scripts/) stand on harness/ and src/ and never import each other.
 */
export const rooms: Record<string, string[]> = {
  harness: ["src"],
  test: ["src", "harness"],
  e2e: ["src", "harness"],
  scripts: ["src", "harness"],
};

/** A test may import the generator of a committed file (scripts/gen-*.ts) to check the file is its output. */
const checkedGenerator = /^scripts\/gen-[^/]+\.ts$/;

function roomViolations(file: SourceFile): Violation[] {
  const from = file.path.split("/")[0] ?? "";
  if (!Object.hasOwn(rooms, from)) return [];
  const allowed = rooms[from] ?? [];
  return importsOf(file.text)
    .filter(({ specifier }) => specifier.startsWith("."))
    .map(({ specifier, line }) => ({ specifier, line, to: posix.join(posix.dirname(file.path), specifier) }))
    .filter(({ to }) => !(from === "test" && checkedGenerator.test(to)))
    .map(({ specifier, line, to }) => ({ specifier, line, room: to.split("/")[0] ?? "" }))
    .filter(({ room }) => room !== from && Object.hasOwn(rooms, room) && !allowed.includes(room))
    .map(({ specifier, line, room }) => ({
      file: file.path,
      line,
      specifier,
      rule: `${from} must not import ${room}`,
    }));
}

/** Production code under src/ imports none of the rooms beside it. */
function productionViolations(file: SourceFile): Violation[] {
  if (!file.path.startsWith("src/") || /\.i?test\.ts$/.test(file.path)) return [];
  return importsOf(file.text)
    .filter(({ specifier }) => specifier.startsWith("."))
    .map(({ specifier, line }) => ({
      specifier,
      line,
      room: posix.join(posix.dirname(file.path), specifier).split("/")[0],
    }))
    .filter(({ room }) => room !== undefined && Object.hasOwn(rooms, room))
    .map(({ specifier, line, room }) => ({
      file: file.path,
      line,
      specifier,
      rule: `src must not import ${room}`,
    }));
}

export function checkDependencies(files: SourceFile[]): Violation[] {
  const violations: Violation[] = [
    ...files.flatMap(orderCoreViolations),
    ...files.flatMap(legViolations),
    ...files.flatMap(runtimeLayerViolations),
    ...files.flatMap(roomViolations),
    ...files.flatMap(productionViolations),
  ];
  for (const file of files) {
    const from = componentOf(file.path) as Component | undefined;
    const denied = from ? forbidden[from] : undefined;
    if (!from || !denied) continue;
    for (const { specifier, line } of importsOf(file.text)) {
      // Packages (zod, node:fs, ...) are no component; only relative paths reach one.
      if (!specifier.startsWith(".")) continue;
      const to = componentOf(posix.join(posix.dirname(file.path), specifier)) as Component | undefined;
      if (to && to !== from && denied.includes(to)) {
        violations.push({ file: file.path, line, specifier, rule: `${from} must not import ${to}` });
      }
    }
  }
  return violations;
}

function sourcesUnder(root: string, folder: string): SourceFile[] {
  return readdirSync(join(root, folder), { recursive: true, encoding: "utf8" })
    .map((name) => join(root, folder, name))
    .filter((path) => path.endsWith(".ts"))
    .map((path) => ({
      path: relative(root, path).split("\\").join("/"),
      text: readFileSync(path, "utf8"),
    }))
    .sort((a, b) => a.path.localeCompare(b.path));
}

/** The non-test TypeScript files under `root`/src. */
export function productionSources(root: string): SourceFile[] {
  return sourcesUnder(root, "src").filter((file) => !/\.i?test\.ts$/.test(file.path));
}

/** Every TypeScript file, tests included, in the rooms beside src/ (harness/, test/, e2e/, scripts/). */
export function roomSources(root: string): SourceFile[] {
  return Object.keys(rooms).flatMap((room) => sourcesUnder(root, room));
}

export function describeViolation(v: Violation): string {
  return `${v.file}:${v.line} imports "${v.specifier}" (${v.rule})`;
}

export const repositoryRoot = dirname(dirname(import.meta.dirname));
