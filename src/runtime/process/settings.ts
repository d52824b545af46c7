import { z } from "zod";
import { parseDuration } from "../base/duration.ts";
import { byCodeUnits } from "../base/code-units.ts";

// Settings come from flags (`--name=value`, `--name value`, `--flag` for booleans) and from
// VHOST_BROKER_<NAME> environment variables; a flag wins over the environment, which wins over the
// default. Each component defines its settings as a group; the program parses the union of the groups.

export interface Setting<T> {
  description: string;
  schema: z.ZodType<T>;
  /** The default as it would be written on the command line; undefined = no default. */
  default?: string;
  boolean?: boolean;
}

export type SettingGroup = Record<string, Setting<unknown>>;
export type SettingValues<G extends SettingGroup> = {
  [K in keyof G]: G[K] extends Setting<infer T> ? T : never;
};

export function setting<T>(definition: Setting<T>): Setting<T> {
  return definition;
}

export function envName(name: string): string {
  return `VHOST_BROKER_${name.replace(/-/g, "_").toUpperCase()}`;
}

export class SettingsError extends Error {
  override name = "SettingsError";
}

/** A Go duration that is not negative, like `15s`, `1m30s`, `500ms` or `2h`, in milliseconds. */
export const duration = z.string().transform((text, ctx) => {
  const ms = parseDuration(text);
  if (ms === undefined || ms < 0) {
    ctx.addIssue({ code: "custom", message: `"${text}" is not a duration like 500ms, 15s, 2m or 1h30m` });
    return z.NEVER;
  }
  return ms;
});

/**
 * A deadline: a duration of at most 24h. Each is armed as one timer (an AbortSignal's, a socket's), and
 * Node runs a timer past 24.8 days after 1 ms instead.
 */
export const deadline = duration.pipe(z.number().max(24 * 3_600_000, "must be at most 24h"));

export const booleanText = z.enum(["true", "false"]).transform((v) => v === "true");

export const integerText = (min: number) =>
  z.string().regex(/^\d+$/, "must be a whole number").transform(Number).pipe(z.number().int().min(min));

function readFlags(group: SettingGroup, argv: string[]): Map<string, string> {
  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    const m = /^--([a-z0-9-]+)(?:=(.*))?$/.exec(arg);
    const name = m?.[1];
    if (!m || name === undefined) throw new SettingsError(`unexpected argument "${arg}" (see --help)`);
    const definition = group[name];
    if (!definition) throw new SettingsError(`unknown setting --${name} (see --help)`);
    if (m[2] !== undefined) flags.set(name, m[2]);
    else if (definition.boolean) flags.set(name, "true");
    else if (i + 1 < argv.length) flags.set(name, argv[++i] ?? "");
    else throw new SettingsError(`setting --${name} needs a value`);
  }
  return flags;
}

/** Parses and validates every setting of `group`; the error names the setting and its source. */
export function parseSettings<G extends SettingGroup>(
  group: G,
  argv: string[],
  env: Record<string, string | undefined>,
): SettingValues<G> {
  const flags = readFlags(group, argv);
  const values: Record<string, unknown> = {};
  for (const [name, definition] of Object.entries(group)) {
    const fromFlag = flags.get(name);
    const fromEnv = env[envName(name)];
    const raw = fromFlag ?? fromEnv ?? definition.default;
    const source = fromFlag !== undefined ? `--${name}` : fromEnv !== undefined ? envName(name) : "default";
    const result = definition.schema.safeParse(raw);
    if (!result.success) {
      const why = result.error.issues.map((i) => i.message).join("; ");
      throw new SettingsError(
        `invalid setting ${name} (--${name} / ${envName(name)}, from ${source}): ${raw === undefined ? "required" : why}`,
      );
    }
    values[name] = result.data;
  }
  return values as SettingValues<G>;
}

export function helpText(program: string, group: SettingGroup): string {
  const lines = [
    `Usage: ${program} [--setting=value ...]`,
    `       ${program} --version`,
    "",
    "Settings (flag, environment variable):",
  ];
  for (const [name, d] of Object.entries(group).sort(([a], [b]) => byCodeUnits(a, b))) {
    lines.push(`  --${name}, ${envName(name)}`);
    lines.push(`      ${d.description}${d.default !== undefined ? ` (default: ${d.default || '""'})` : ""}`);
  }
  return lines.join("\n");
}
