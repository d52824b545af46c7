// deploy/vhost-broker/values.schema.json's settings are what scripts/gen-chart-schema.ts makes of the
// operator's settings table, and they accept every value the binary accepts (a small checker of the
// schema keywords the generator writes stands in for helm's, which test/charts/settings.itest.ts runs).
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  chartOwnedSettings,
  durationPattern,
  renderValuesSchema,
  schemaPath,
  settingsSchema,
  type JsonSchema,
} from "../../scripts/gen-chart-schema.ts";
import { operatorSettings } from "../../src/operator/settings.ts";
import { duration, type Setting } from "../../src/runtime/process/settings.ts";

const table = operatorSettings as Record<string, Setting<unknown>>;
const properties = settingsSchema()["properties"] as Record<string, JsonSchema>;

const typeOf = (value: unknown) =>
  typeof value === "number" ? (Number.isInteger(value) ? "integer" : "number") : typeof value;

/** The keywords the generator writes: type, enum, pattern, minLength, minimum, maximum. */
function accepts(schema: JsonSchema, value: unknown): boolean {
  const types = ([] as unknown[]).concat(schema["type"] ?? []);
  const number = typeof value === "number" && types.includes("number");
  if (types.length > 0 && !types.includes(typeOf(value)) && !number) return false;
  if (Array.isArray(schema["enum"]) && !schema["enum"].includes(value)) return false;
  if (typeof value === "string") {
    if (typeof schema["pattern"] === "string" && !new RegExp(schema["pattern"], "u").test(value))
      return false;
    if (typeof schema["minLength"] === "number" && value.length < schema["minLength"]) return false;
  }
  if (typeof value === "number") {
    if (typeof schema["minimum"] === "number" && value < schema["minimum"]) return false;
    if (typeof schema["maximum"] === "number" && value > schema["maximum"]) return false;
  }
  return true;
}

const binaryAccepts = (name: string, text: string) => table[name]?.schema.safeParse(text).success === true;

const samples = [
  ...["", "0", "08", "1", "8", "16", "3306", "65535", "65536", "-1", "x", "true", "false", "yes"],
  ...[
    "0s",
    "15s",
    "1m30s",
    "1.5h",
    "250us",
    "500ms",
    "2µs",
    ".5s",
    "+5s",
    "-5s",
    "-0s",
    "-0.0ms",
    "-1s",
    "5",
    "1d",
  ],
  ...["trace", "info", "token", "kubernetes", "hash", "amqp", "none", "all", "names:a,ns/b", "names:"],
  ...["annotation:c5c3.io/serve", "annotation:k=v", "http://127.0.0.1:28200", "https://openbao:8200"],
  ...["openbao:8200", "ftp://x", "a,b", ".cluster.local", "rotation-policy"],
];

describe("values.schema.json settings", () => {
  it("are what scripts/gen-chart-schema.ts generates (run it after changing a setting)", async () => {
    expect(readFileSync(schemaPath, "utf8")).toBe(await renderValuesSchema());
  });

  it("hold every setting of the table but those the chart sets itself, which name their value", () => {
    const names = Object.keys(table);
    expect(Object.keys(properties).sort()).toEqual(names.filter((n) => !(n in chartOwnedSettings)).sort());
    expect(Object.keys(chartOwnedSettings).filter((n) => !names.includes(n))).toEqual([]);
    expect(settingsSchema()["required"]).toEqual(["openbao-address"]);
  });

  it("accept every value the binary accepts, as text and as the YAML value it would be", () => {
    const refused: string[] = [];
    for (const [name, schema] of Object.entries(properties)) {
      for (const text of samples) {
        if (!binaryAccepts(name, text)) continue;
        const typed = table[name]?.boolean ? text === "true" : /^\d+$/.test(text) ? Number(text) : text;
        if (!accepts(schema, text)) refused.push(`${name}: "${text}"`);
        if (!accepts(schema, typed)) refused.push(`${name}: ${String(typed)}`);
      }
    }
    expect(refused).toEqual([]);
  });

  it("refuse what the binary refuses for durations, booleans and choices", () => {
    const disagree: string[] = [];
    for (const [name, schema] of Object.entries(properties)) {
      const definition = table[name];
      const exact = definition?.schema === duration || definition?.boolean || Array.isArray(schema["enum"]);
      if (!exact) continue;
      for (const text of samples)
        if (accepts(schema, text) !== binaryAccepts(name, text)) disagree.push(`${name}: "${text}"`);
    }
    expect(disagree).toEqual([]);
    expect(new RegExp(durationPattern, "u").test("-5s")).toBe(false);
  });

  it("refuse a non-number and a zero where the binary wants a positive count", () => {
    const schema = properties["max-concurrent-reconciles"] as JsonSchema;
    expect([accepts(schema, "0"), accepts(schema, 0), accepts(schema, "x"), accepts(schema, 8)]).toEqual([
      false,
      false,
      false,
      true,
    ]);
  });
});
