// Loads the configured plugins at start-up: each entry is a shipped plugin's name, an npm package name or
// the path of an ES module whose default export is a GatekeeperPlugin. A plugin that cannot be loaded,
// does not have the plugin's shape, or whose configure() throws stops the start (GatekeeperStartError,
// exit 2), with a message that names it.
import { inPluginScope } from "./containment.ts";
import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { z } from "zod";
import { GATEKEEPER_API_VERSION, type ConfigurationContext, type GatekeeperPlugin } from "./api.ts";
import { isGatedKind } from "./kinds.ts";
import { groups, type Group, type Grouped } from "./order.ts";

export class GatekeeperStartError extends Error {
  override name = "GatekeeperStartError";
}

/** This module's own extension: .ts from the sources, .js from the build (`npm run build`) the image runs. */
const ext = import.meta.url.slice(import.meta.url.lastIndexOf("."));

/** The plugins shipped with vhost-broker, by name. */
export const shippedPlugins: Readonly<Record<string, URL>> = {
  "log-resource": new URL(`./plugins/log-resource${ext}`, import.meta.url),
  "order-quota": new URL(`./plugins/order-quota${ext}`, import.meta.url),
  "rotation-policy": new URL(`./plugins/rotation-policy${ext}`, import.meta.url),
};

/**
 * Always run, closest to the reconcile, and not configurable. Empty: everything the operator must do
 * is its reconcilers' own work, and a rule no deployer may switch off belongs there, not in a plugin.
 */
export const mandatoryPlugins: readonly string[] = [];

/** The default group when --gatekeeper-default-plugins is not set. */
export const defaultPlugins: readonly string[] = ["rotation-policy"];

/** Splits a setting's comma-separated list; empty entries are dropped, so "" is no plugin. */
export function pluginList(text: string): string[] {
  return text
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
}

/** What `import()` is given for an entry: a shipped plugin's URL, a path's file URL, or the package name. */
export function moduleSpecifier(entry: string, cwd: string): string {
  const shipped = shippedPlugins[entry];
  if (shipped) return shipped.href;
  const isPath = isAbsolute(entry) || entry.startsWith("./") || entry.startsWith("../");
  return isPath ? pathToFileURL(resolve(cwd, entry)).href : entry;
}

const hooks = z.looseObject({
  entry: z.custom<() => unknown>((v) => typeof v === "function", "must be a function").optional(),
  exit: z.custom<() => unknown>((v) => typeof v === "function", "must be a function").optional(),
});
const pluginShape = z.looseObject({
  apiVersion: z.literal(GATEKEEPER_API_VERSION, `must be "${GATEKEEPER_API_VERSION}"`),
  name: z.string().regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, "must be a lowercase name like my-plugin"),
  configure: z.custom<() => unknown>((v) => typeof v === "function", "must be a function").optional(),
  validating: z.record(z.string(), hooks).optional(),
  mutating: z.record(z.string(), hooks).optional(),
});

/** Why `value` is not a plugin; undefined when it is one. */
export function pluginProblem(value: unknown): string | undefined {
  const parsed = pluginShape.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return `its default export is not a gatekeeper plugin: ${issue?.path.join(".") || "the export"} ${issue?.message ?? ""}`;
  }
  const { validating = {}, mutating = {} } = parsed.data;
  for (const kind of [...Object.keys(validating), ...Object.keys(mutating)]) {
    if (!isGatedKind(kind)) return `it names the kind ${kind}, which is not gated`;
    if (kind in validating && kind in mutating) return `it both validates and mutates ${kind}; choose one`;
  }
  return undefined;
}

export interface LoadOptions {
  /** The configured entries of the default and custom groups. */
  entries: { default: readonly string[]; custom: readonly string[] };
  /** The context of configure(), per plugin (its logger names it). */
  context: (plugin: string) => ConfigurationContext;
  cwd?: string;
  /** Replaces mandatoryPlugins (tests). */
  mandatory?: readonly string[];
}

export async function loadPlugins(options: LoadOptions): Promise<Grouped<GatekeeperPlugin>> {
  const entries: Grouped<string> = {
    mandatory: options.mandatory ?? mandatoryPlugins,
    default: options.entries.default,
    custom: options.entries.custom,
  };
  const loaded: Record<Group, GatekeeperPlugin[]> = { mandatory: [], default: [], custom: [] };
  const names = new Set<string>();
  for (const group of groups) {
    for (const entry of entries[group]) {
      const plugin = await loadOne(entry, group, options.cwd ?? process.cwd());
      if (names.has(plugin.name))
        throw new GatekeeperStartError(
          `gatekeeper plugin "${entry}" (${group}): the name "${plugin.name}" is loaded twice`,
        );
      names.add(plugin.name);
      loaded[group].push(plugin);
    }
  }
  for (const group of groups) {
    for (const plugin of loaded[group]) {
      try {
        // What configure starts (a timer, say) stays in the plugin's scope: a later throw is logged
        // naming it, and no hook is running for it to fail.
        await inPluginScope(
          plugin.name,
          () => undefined,
          () => plugin.configure?.(options.context(plugin.name)),
        );
      } catch (error) {
        const why = error instanceof Error ? error.message : String(error);
        throw new GatekeeperStartError(
          `gatekeeper plugin "${plugin.name}" (${group}): configure failed: ${why}`,
          {
            cause: error,
          },
        );
      }
    }
  }
  return loaded;
}

async function loadOne(entry: string, group: Group, cwd: string): Promise<GatekeeperPlugin> {
  let module: { default?: unknown };
  try {
    module = (await import(moduleSpecifier(entry, cwd))) as { default?: unknown };
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new GatekeeperStartError(`gatekeeper plugin "${entry}" (${group}) cannot be loaded: ${why}`, {
      cause: error,
    });
  }
  const problem = pluginProblem(module.default);
  if (problem) throw new GatekeeperStartError(`gatekeeper plugin "${entry}" (${group}): ${problem}`);
  return module.default as GatekeeperPlugin;
}
