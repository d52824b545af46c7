// Generates, from the CRD manifests in crds/ (the one source of truth), the zod schemas and TypeScript
// types in src/api/generated.ts and the reference pages in docs/api/. Run: node scripts/gen-api.ts
// src/api/generated.test.ts regenerates in memory and fails when a committed file differs.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { V1CustomResourceDefinition, V1JSONSchemaProps } from "@kubernetes/client-node";
import { format, resolveConfig } from "prettier";
import { parse } from "yaml";
import { localEnvCrds, shippedCrds } from "../src/api/crds.ts";

const root = fileURLToPath(new URL("../", import.meta.url));
export const generatedPath = join(root, "src/api/generated.ts");
export const docsDirectory = join(root, "docs/api");
export const examplesDirectory = join(docsDirectory, "examples");

// The manifests are parsed YAML, so `enum` and `default` keep their JSON names (the client's type calls
// them `_enum` and `_default`).
type Schema = V1JSONSchemaProps & {
  enum?: (string | number | boolean)[];
  default?: unknown;
  "x-kubernetes-validations"?: { rule: string; message?: string }[];
  "x-kubernetes-preserve-unknown-fields"?: boolean;
};

interface Kind {
  crd: V1CustomResourceDefinition;
  kind: string;
  /** The TypeScript name: the kind, prefixed where another group has a kind of that name. */
  typeName: string;
  apiVersion: string;
  schema: Schema;
  shipped: boolean;
}

/**
 * Groups whose kinds' names another group also uses (User: rabbitmq.com and MariaDB): their types,
 * schemas and reference pages carry this prefix, e.g. SqlUser, SqlUserSchema and sql-user.md.
 */
const typePrefixes: Record<string, string> = { "mariadb.osh.openstack.org": "Sql" };

/** The TypeScript name of a kind of `apiVersion`, e.g. User of mariadb.osh.openstack.org/v1alpha1 is SqlUser. */
export function typeNameOf(ref: { kind: string; apiVersion: string }): string {
  const group = ref.apiVersion.includes("/") ? ref.apiVersion.split("/")[0] : "";
  return `${typePrefixes[group ?? ""] ?? ""}${ref.kind}`;
}

function kindsOf(): Kind[] {
  const tag = (shipped: boolean) => (crd: V1CustomResourceDefinition) => {
    const version = crd.spec.versions.find((v) => v.storage) ?? crd.spec.versions[0];
    if (!version?.schema?.openAPIV3Schema) throw new Error(`${crd.metadata?.name} has no schema`);
    const apiVersion = `${crd.spec.group}/${version.name}`;
    return {
      crd,
      kind: crd.spec.names.kind,
      typeName: typeNameOf({ kind: crd.spec.names.kind, apiVersion }),
      apiVersion,
      schema: version.schema.openAPIV3Schema as Schema,
      shipped,
    };
  };
  return [...shippedCrds().map(tag(true)), ...localEnvCrds().map(tag(false))];
}

function property(schema: Schema, name: string): Schema | undefined {
  return schema.properties?.[name] as Schema | undefined;
}

// ---------------------------------------------------------------------------------------------------
// zod

function zodOf(s: Schema): string {
  const preserve = s["x-kubernetes-preserve-unknown-fields"] === true;
  if (s.type === "object" || (!s.type && s.properties)) {
    if (s.properties && Object.keys(s.properties).length > 0) {
      const required = new Set(s.required ?? []);
      const fields = Object.entries(s.properties).map(([name, child]) => {
        const c = child as Schema;
        const doc = c.description ? `/** ${c.description.replace(/\*\//g, "* /")} */\n` : "";
        return `${doc}${JSON.stringify(name)}: ${zodOf(c)}${required.has(name) ? "" : ".optional()"}`;
      });
      return `z.${preserve ? "looseObject" : "object"}({\n${fields.join(",\n")}\n})`;
    }
    const values = s.additionalProperties;
    if (values && typeof values === "object") return `z.record(z.string(), ${zodOf(values as Schema)})`;
    return preserve ? "z.record(z.string(), z.unknown())" : "z.object({})";
  }
  switch (s.type) {
    case "string": {
      if (s.enum) return `z.enum(${JSON.stringify(s.enum)})`;
      let out = "z.string()";
      if (s.minLength !== undefined) out += `.min(${s.minLength})`;
      if (s.maxLength !== undefined) out += `.max(${s.maxLength})`;
      if (s.pattern) out += `.regex(new RegExp(${JSON.stringify(s.pattern)}))`;
      return out;
    }
    case "integer":
    case "number": {
      let out = s.type === "integer" ? "z.number().int()" : "z.number()";
      if (s.minimum !== undefined) out += `.min(${s.minimum})`;
      if (s.maximum !== undefined) out += `.max(${s.maximum})`;
      return out;
    }
    case "boolean":
      return "z.boolean()";
    case "array": {
      let out = `z.array(${zodOf((s.items ?? {}) as Schema)})`;
      if (s.maxItems !== undefined) out += `.max(${s.maxItems})`;
      return out;
    }
    default:
      if (preserve) return "z.unknown()";
      throw new Error(`cannot express schema of type ${String(s.type)} in zod`);
  }
}

function zodKind(k: Kind): string {
  const spec = property(k.schema, "spec");
  const status = property(k.schema, "status");
  const specRequired = (k.schema.required ?? []).includes("spec");
  const out = [`// ${k.apiVersion} ${k.kind}${k.shipped ? "" : " (local environment and tests only)"}`];
  const parts: string[] = [];
  for (const [part, schema] of [
    ["Spec", spec],
    ["Status", status],
  ] as const) {
    if (!schema) continue;
    out.push(`export const ${k.typeName}${part}Schema = ${zodOf(schema)};`);
    out.push(`export type ${k.typeName}${part} = z.infer<typeof ${k.typeName}${part}Schema>;`);
    parts.push(part);
  }
  const fields = [
    `apiVersion: z.literal(${JSON.stringify(k.apiVersion)}).optional()`,
    `kind: z.literal(${JSON.stringify(k.kind)}).optional()`,
    "metadata: ObjectMetaSchema",
    ...(parts.includes("Spec") ? [`spec: ${k.typeName}SpecSchema${specRequired ? "" : ".optional()"}`] : []),
    ...(parts.includes("Status") ? [`status: ${k.typeName}StatusSchema.optional()`] : []),
  ];
  out.push(`/** A ${k.kind} as read from the API server (a listed item carries no apiVersion or kind). */`);
  out.push(`export const ${k.typeName}Schema = z.object({ ${fields.join(", ")} });`);
  out.push(`export type ${k.typeName} = z.infer<typeof ${k.typeName}Schema>;`);
  return out.join("\n");
}

export async function renderGenerated(): Promise<string> {
  const source = [
    "// Generated by scripts/gen-api.ts from crds/. Do not edit: change the CRD and run `node scripts/gen-api.ts`.",
    'import { z } from "zod";',
    'import { ObjectMetaSchema } from "./meta.ts";',
    ...kindsOf().map(zodKind),
  ].join("\n\n");
  return format(source, { ...(await resolveConfig(generatedPath)), parser: "typescript" });
}

// ---------------------------------------------------------------------------------------------------
// reference pages

interface Row {
  path: string;
  schema: Schema;
  required: boolean;
}

/** Every property path below `prefix`, depth first; list items appear as `path[]`. */
export function fieldRows(schema: Schema, prefix: string, required = false): Row[] {
  const rows: Row[] = [{ path: prefix, schema, required }];
  const need = new Set(schema.required ?? []);
  for (const [name, child] of Object.entries(schema.properties ?? {})) {
    rows.push(...fieldRows(child as Schema, `${prefix}.${name}`, need.has(name)));
  }
  if (schema.type === "array" && schema.items) {
    const items = schema.items as Schema;
    if (items.properties) rows.push(...fieldRows(items, `${prefix}[]`).slice(1));
  }
  return rows;
}

function typeOf(s: Schema): string {
  if (s.type === "array") return `[]${typeOf((s.items ?? {}) as Schema)}`;
  if (
    s.type === "object" &&
    !s.properties &&
    s.additionalProperties &&
    typeof s.additionalProperties === "object"
  ) {
    const values = s.additionalProperties as Schema;
    return `map[string]${values.type ?? "any"}`;
  }
  if (!s.type) return "any";
  return s.format ? `${s.type} (${s.format})` : s.type;
}

function bounds(s: Schema): string {
  const out: string[] = [];
  if (s.enum) out.push(`one of ${s.enum.map((v) => `\`${String(v)}\``).join(", ")}`);
  if (s.minLength !== undefined) out.push(`length ≥ ${s.minLength}`);
  if (s.maxLength !== undefined) out.push(`length ≤ ${s.maxLength}`);
  if (s.minimum !== undefined) out.push(`≥ ${s.minimum}`);
  if (s.maximum !== undefined) out.push(`≤ ${s.maximum}`);
  if (s.maxItems !== undefined) out.push(`at most ${s.maxItems} items`);
  if (s.pattern) out.push(`matches \`${s.pattern}\``);
  return out.join("; ");
}

const cell = (text: string | undefined) => (text ?? "").replace(/\|/g, "\\|").replace(/\n/g, " ");
const code = (text: string) => `\`${text.replace(/\|/g, "\\|")}\``;

function fieldTable(rows: Row[], withDefaults: boolean): string[] {
  const head = withDefaults
    ? [
        "| Field | Type | Required | Default | Bounds | Description |",
        "| --- | --- | --- | --- | --- | --- |",
      ]
    : ["| Field | Type | Description |", "| --- | --- | --- |"];
  const lines = rows.map((r) =>
    withDefaults
      ? `| ${code(r.path)} | ${typeOf(r.schema)} | ${r.required ? "yes" : "no"} | ${
          r.schema.default === undefined ? "" : code(JSON.stringify(r.schema.default))
        } | ${cell(bounds(r.schema))} | ${cell(r.schema.description)} |`
      : `| ${code(r.path)} | ${typeOf(r.schema)} | ${cell(r.schema.description)} |`,
  );
  return [...head, ...lines];
}

/** The examples of one kind of one API version (User is a kind of two groups). */
export function examplesOf(ref: { kind: string; apiVersion: string }): { file: string; text: string }[] {
  if (!existsSync(examplesDirectory)) return [];
  return readdirSync(examplesDirectory)
    .filter((f) => f.endsWith(".yaml"))
    .sort()
    .map((file) => ({ file, text: readFileSync(join(examplesDirectory, file), "utf8") }))
    .filter((e) => {
      const { kind, apiVersion } = parse(e.text) as { kind?: string; apiVersion?: string };
      return kind === ref.kind && apiVersion === ref.apiVersion;
    });
}

/** e.g. vhost.md, and sql-user.md for a kind whose name another group also uses. */
export function pageName(ref: { kind: string; apiVersion: string }): string {
  const prefix = typeNameOf(ref).slice(0, -ref.kind.length).toLowerCase();
  return `${prefix ? `${prefix}-` : ""}${ref.kind.toLowerCase()}.md`;
}

function renderPage(k: Kind): string {
  const { names, scope, group } = k.crd.spec;
  const version = k.crd.spec.versions.find((v) => v.storage) ?? k.crd.spec.versions[0];
  const lines = [
    // A kind whose name another group also uses says its group in the title.
    `# ${k.kind}${k.typeName === k.kind ? "" : ` (${group})`}`,
    "",
    "<!-- Generated by scripts/gen-api.ts from the CRD in crds/. Do not edit by hand. -->",
    "",
    k.shipped ? "" : "**For the local environment and tests only; not shipped with vhost-broker.**\n",
    cell(k.schema.description),
    "",
    "| API | Value |",
    "| --- | --- |",
    `| Group | ${code(group)} |`,
    `| Version | ${code(version?.name ?? "")} |`,
    `| Kind | ${code(k.kind)} |`,
    `| List kind | ${code(names.listKind ?? `${k.kind}List`)} |`,
    `| Plural | ${code(names.plural)} |`,
    `| Scope | ${scope} |`,
    `| Categories | ${(names.categories ?? []).map(code).join(", ")} |`,
    `| Status subresource | ${version?.subresources?.status ? "yes" : "no"} |`,
    "",
    "## Printer columns",
    "",
    "| Column | Type | Source |",
    "| --- | --- | --- |",
    ...(version?.additionalPrinterColumns ?? []).map(
      (c) => `| ${c.name} | ${c.type} | ${code(c.jsonPath)} |`,
    ),
  ];
  const spec = property(k.schema, "spec");
  if (spec) lines.push("", "## Spec", "", ...fieldTable(fieldRows(spec, "spec").slice(1), true));
  const status = property(k.schema, "status");
  if (status) lines.push("", "## Status", "", ...fieldTable(fieldRows(status, "status").slice(1), false));
  const rules = fieldRows(k.schema, "").flatMap((r) =>
    (r.schema["x-kubernetes-validations"] ?? []).map(
      (v) => `| ${code(r.path.slice(1) || "(object)")} | ${code(v.rule)} | ${cell(v.message)} |`,
    ),
  );
  if (rules.length > 0) {
    lines.push("", "## Rules", "", "Enforced by the API server (CEL); a refusal carries the message.", "");
    lines.push("| On | Rule | Message |", "| --- | --- | --- |", ...rules);
  }
  const examples = examplesOf(k);
  if (examples.length > 0) {
    lines.push("", "## Examples", "", "Each applies unchanged (the admission suite applies every one).");
    for (const e of examples)
      lines.push("", `\`examples/${e.file}\`:`, "", "```yaml", e.text.trimEnd(), "```");
  }
  return lines.join("\n") + "\n";
}

function renderIndex(kinds: Kind[]): string {
  const rows = kinds.map(
    (k) =>
      `| [${k.kind}](./${pageName(k)}) | ${code(k.apiVersion)} | ${k.shipped ? "yes" : "no (local environment)"} |`,
  );
  return [
    "# API reference",
    "",
    "<!-- Generated by scripts/gen-api.ts from the CRDs in crds/. Do not edit by hand. -->",
    "",
    "| Kind | API version | Shipped |",
    "| --- | --- | --- |",
    ...rows,
    "",
  ].join("\n");
}

/** Every reference page, by file name in docs/api/, formatted as committed. */
export async function renderPages(): Promise<Map<string, string>> {
  const kinds = kindsOf();
  const config = await resolveConfig(join(docsDirectory, "README.md"));
  const pages = new Map<string, string>();
  pages.set("README.md", await format(renderIndex(kinds), { ...config, parser: "markdown" }));
  for (const k of kinds)
    pages.set(pageName(k), await format(renderPage(k), { ...config, parser: "markdown" }));
  return pages;
}

if (import.meta.main) {
  writeFileSync(generatedPath, await renderGenerated());
  mkdirSync(docsDirectory, { recursive: true });
  for (const [file, text] of await renderPages()) writeFileSync(join(docsDirectory, file), text);
  console.log(`wrote ${generatedPath} and the pages in ${docsDirectory}`);
}
