// Loading the configured plugins: shipped names, file paths and package names; a missing plugin, a
// module that is no plugin and a failing configure() stop the start with a message naming the plugin;
// and the two settings (unset = the defaults, set even to empty = replaced).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  GatekeeperStartError,
  defaultPlugins,
  loadPlugins,
  mandatoryPlugins,
  moduleSpecifier,
  pluginList,
} from "../../src/gatekeeper/loader.ts";
import { loadConfig } from "../../src/runtime/process/config.ts";
import { operatorSettings } from "../../src/operator/settings.ts";
import { FakeKube } from "../../harness/fakes/fake-kube.ts";
import { RecordingLog } from "./support.ts";

const dir = mkdtempSync(join(tmpdir(), "gatekeeper-loader-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const file = (name: string, text: string) => {
  writeFileSync(join(dir, name), text);
  return join(dir, name);
};
const plugin = (name: string, body = "") =>
  `export default { apiVersion: "gatekeeper.c5c3.io/v1", name: ${JSON.stringify(name)}, ${body} };\n`;

const load = (custom: string[], defaults: string[] = [], mandatory: string[] = []) =>
  loadPlugins({
    entries: { default: defaults, custom },
    mandatory,
    cwd: dir,
    context: () => ({
      kube: new FakeKube(),
      kubernetesVersion: "v1.37.2",
      log: new RecordingLog(),
      clock: { now: () => 0 },
      env: {},
    }),
  });

describe("loading plugins", () => {
  it("loads shipped names, absolute and relative paths into their groups, in order", async () => {
    const absolute = file("first.mjs", plugin("first"));
    file("second.mjs", plugin("second"));
    const groups = await load([absolute, "./second.mjs"], ["rotation-policy"], ["log-resource"]);
    expect(groups.custom.map((p) => p.name)).toEqual(["first", "second"]);
    expect(groups.default.map((p) => p.name)).toEqual(["rotation-policy"]);
    expect(groups.mandatory.map((p) => p.name)).toEqual(["log-resource"]);
  });

  it("calls configure with the context", async () => {
    const path = file(
      "configured.mjs",
      plugin("configured", "configure(c) { globalThis.configuredWith = c.kubernetesVersion; }"),
    );
    await load([path]);
    expect((globalThis as { configuredWith?: string }).configuredWith).toBe("v1.37.2");
  });

  it("stops on a missing plugin, naming it and its group", async () => {
    await expect(load(["./missing.mjs"])).rejects.toThrow(
      /^gatekeeper plugin "\.\/missing\.mjs" \(custom\) cannot be loaded: /,
    );
    await expect(load([], ["no-such-package-for-vhost-broker"])).rejects.toThrow(
      /gatekeeper plugin "no-such-package-for-vhost-broker" \(default\) cannot be loaded/,
    );
  });

  it("stops on a failing configure, naming the plugin", async () => {
    const path = file("failing.mjs", plugin("failing", 'configure() { throw new Error("no licence"); }'));
    const error = await load([path]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatekeeperStartError);
    expect((error as Error).message).toBe(
      'gatekeeper plugin "failing" (custom): configure failed: no licence',
    );
  });

  it("stops on a module that is no plugin, or names an ungated kind, or both validates and mutates a kind", async () => {
    const cases: [string, RegExp][] = [
      ["export const x = 1;\n", /its default export is not a gatekeeper plugin/],
      [
        'export default { apiVersion: "gatekeeper.c5c3.io/v0", name: "old" };\n',
        /apiVersion must be "gatekeeper.c5c3.io\/v1"/,
      ],
      [
        plugin("cm", "validating: { ConfigMap: { entry() {} } }"),
        /names the kind ConfigMap, which is not gated/,
      ],
      [
        plugin("both", "validating: { Vhost: {} }, mutating: { Vhost: {} }"),
        /both validates and mutates Vhost; choose one/,
      ],
      [plugin("nofn", "validating: { Vhost: { entry: 1 } }"), /validating\.Vhost\.entry must be a function/],
    ];
    for (const [index, [text, message]] of cases.entries()) {
      await expect(load([file(`bad-${index}.mjs`, text)])).rejects.toThrow(message);
    }
  });

  it("refuses two plugins of one name", async () => {
    const a = file("dup-a.mjs", plugin("dup"));
    const b = file("dup-b.mjs", plugin("dup"));
    await expect(load([a, b])).rejects.toThrow(/the name "dup" is loaded twice/);
  });

  it("resolves entries: shipped names, paths, packages", () => {
    expect(moduleSpecifier("order-quota", "/x")).toMatch(
      /^file:.*\/src\/gatekeeper\/plugins\/order-quota\.ts$/,
    );
    expect(moduleSpecifier("./p.mjs", "/srv")).toBe("file:///srv/p.mjs");
    expect(moduleSpecifier("/etc/p.mjs", "/srv")).toBe("file:///etc/p.mjs");
    expect(moduleSpecifier("@acme/gatekeeper-audit", "/srv")).toBe("@acme/gatekeeper-audit");
  });
});

describe("the settings", () => {
  const config = (argv: string[], env: Record<string, string> = {}) =>
    loadConfig(operatorSettings, ["--openbao-address=http://bao:8200", ...argv], env);

  it("unset, the default group is the source's defaults and the custom group is empty", () => {
    expect(config([])["gatekeeper-default-plugins"]).toEqual([...defaultPlugins]);
    expect(config([])["gatekeeper-custom-plugins"]).toEqual([]);
    expect(defaultPlugins).toEqual(["rotation-policy"]);
    expect(mandatoryPlugins).toEqual([]);
  });

  it("set, even to empty, replaces them; as a flag or a VHOST_BROKER_* variable", () => {
    expect(config([], { VHOST_BROKER_GATEKEEPER_DEFAULT_PLUGINS: "" })["gatekeeper-default-plugins"]).toEqual(
      [],
    );
    expect(config(["--gatekeeper-default-plugins="])["gatekeeper-default-plugins"]).toEqual([]);
    const both = config(["--gatekeeper-custom-plugins=order-quota, ./mine.mjs"], {
      VHOST_BROKER_GATEKEEPER_CUSTOM_PLUGINS: "log-resource",
      VHOST_BROKER_GATEKEEPER_DEFAULT_PLUGINS: "log-resource,rotation-policy",
    });
    expect(both["gatekeeper-custom-plugins"]).toEqual(["order-quota", "./mine.mjs"]);
    expect(both["gatekeeper-default-plugins"]).toEqual(["log-resource", "rotation-policy"]);
    expect(pluginList(" a ,, b ")).toEqual(["a", "b"]);
  });
});
