// Generates the `settings` part of deploy/vhost-broker/values.schema.json from the operator's settings
// table (src/operator/settings.ts), so that the chart accepts every setting the binary accepts, in the
// forms a values file gives them (YAML booleans and integers too). The settings the chart sets itself
// from other values are left out and refused, each naming the value to use instead. The rest of the
// schema is written by hand. Run: node scripts/gen-chart-schema.ts
// test/charts/values-schema.test.ts regenerates in memory and fails when the committed file differs.
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { format, resolveConfig } from "prettier";
import { z } from "zod";
import { operatorSettings } from "../src/operator/settings.ts";
import { deadline, duration, type Setting } from "../src/runtime/process/settings.ts";

export const schemaPath = fileURLToPath(
  new URL("../deploy/vhost-broker/values.schema.json", import.meta.url),
);

/** Settings the chart sets from other values (or from the pod), and where to change them instead. */
export const chartOwnedSettings: Record<string, string> = {
  "metrics-bind-address": "metrics.port",
  "metrics-secure": "metrics.secure",
  "metrics-cert-dir": "metrics.certSecret",
  "health-probe-bind-address": "probePort",
  "leader-election-id": "the release's full name, fullnameOverride",
  "leader-election-namespace": "the release's namespace",
  "leader-election-identity": "the pod's name",
  "openbao-token": "openbao.tokenSecret, never the token itself",
  "openbao-token-file": "openbao.serviceAccountToken with settings.openbao-auth=kubernetes",
  "broker-ca-file": "brokerCA",
  "mariadb-password": "mariadb.passwordSecret, as mariadb-password-file, never the password itself",
  "mariadb-password-file": "mariadb.passwordSecret, mounted as a file",
  "mariadb-ca-file": "mariadb.ca",
  "mariadb-tls-cert-file": "mariadb.clientCertSecret",
  "mariadb-tls-key-file": "mariadb.clientCertSecret",
  "secret-namespaces": "rbac.secretNamespaces",
};

/**
 * Go's duration grammar as src/runtime/base/duration.ts parses it, for the values the settings accept: not
 * negative, but a minus before nothing but zeros, as in -0s, which is 0.
 */
const units = "(ns|us|µs|μs|ms|s|m|h)";
export const durationPattern = `^([+]?(0|(([0-9]+(\\.[0-9]*)?|\\.[0-9]+)${units})+)|-(0|((0+(\\.0*)?|\\.0+)${units})+))$`;

export type JsonSchema = Record<string, unknown>;

type ZodDef = { type: string; in?: z.ZodType; out?: z.ZodType; protocol?: RegExp };
const defOf = (schema: z.ZodType) => schema._zod.def as unknown as ZodDef;

/** The number stages of a chain of pipes, e.g. integerText(1).pipe(z.number().max(65535)). */
function numberStages(schema: z.ZodType): z.ZodType[] {
  const def = defOf(schema);
  if (def.type === "number") return [schema];
  if (def.type === "pipe" && def.in && def.out) return [...numberStages(def.in), ...numberStages(def.out)];
  return [];
}

/** One setting's schema, as helm checks a value before the chart turns it into VHOST_BROKER_<NAME>. */
export function settingSchema(definition: Setting<unknown>): JsonSchema {
  const described = (schema: JsonSchema): JsonSchema => ({
    ...schema,
    description:
      definition.default === undefined
        ? definition.description
        : `${definition.description} (default: ${definition.default || '""'})`,
  });
  if (definition.boolean)
    return described({ type: ["boolean", "string"], enum: [true, false, "true", "false"] });
  // A bare 0 is a duration too, and YAML and --set make it a number. A deadline's 24h is the binary's to check.
  if (definition.schema === duration || definition.schema === deadline)
    return described({ type: ["string", "integer"], pattern: durationPattern, minimum: 0, maximum: 0 });
  const numbers = numberStages(definition.schema);
  if (numbers.length > 0) {
    const bounds = numbers.map((n) => z.toJSONSchema(n) as { minimum?: number; maximum?: number });
    const minimum = Math.max(...bounds.map((b) => b.minimum ?? 0));
    const maximum = Math.min(...bounds.map((b) => b.maximum ?? Number.MAX_SAFE_INTEGER));
    return described({
      type: ["integer", "string"],
      // A string form is checked only for its digits; its range is the binary's to check.
      pattern: minimum >= 1 ? "^0*[1-9][0-9]*$" : "^[0-9]+$",
      minimum,
      ...(maximum < Number.MAX_SAFE_INTEGER ? { maximum } : {}),
    });
  }
  const {
    $schema: _,
    format: urlFormat,
    ...input
  } = z.toJSONSchema(definition.schema, {
    io: "input",
    unrepresentable: "any",
  }) as JsonSchema;
  const protocol = defOf(definition.schema).protocol;
  if (urlFormat === "uri" && protocol) {
    return described({ ...input, pattern: `^${protocol.source.replace(/^\^|\$$/g, "")}://` });
  }
  if (urlFormat !== undefined) return described({ ...input, format: urlFormat });
  // Free text: a YAML number or boolean is text to the binary too, once the chart quotes it.
  if (input["type"] === "string" && input["pattern"] === undefined && input["enum"] === undefined)
    return described({ ...input, type: ["string", "number", "boolean"] });
  return described(input);
}

/** The `settings` object of the values: every setting of the table but the chart's own. */
export function settingsSchema(): JsonSchema {
  const entries = Object.entries(operatorSettings as Record<string, Setting<unknown>>).filter(
    ([name]) => !(name in chartOwnedSettings),
  );
  return {
    type: "object",
    description:
      "The operator's settings (docs/operator.md), generated from src/operator/settings.ts by scripts/gen-chart-schema.ts. The chart sets these from other values: " +
      Object.entries(chartOwnedSettings)
        .map(([name, from]) => `${name} from ${from}`)
        .join("; "),
    additionalProperties: false,
    required: entries.filter(([, d]) => d.default === undefined).map(([name]) => name),
    properties: Object.fromEntries(entries.map(([name, d]) => [name, settingSchema(d)])),
  };
}

/** values.schema.json with its settings part generated, formatted as committed. */
export async function renderValuesSchema(): Promise<string> {
  const schema = JSON.parse(readFileSync(schemaPath, "utf8")) as { properties: JsonSchema };
  schema.properties["settings"] = settingsSchema();
  const config = await resolveConfig(schemaPath);
  return format(JSON.stringify(schema, null, 2), { ...config, parser: "json" });
}

if (import.meta.main) {
  writeFileSync(schemaPath, await renderValuesSchema());
  console.log(`wrote ${schemaPath}`);
}
