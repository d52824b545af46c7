import { z } from "zod";
import { describe, expect, it } from "vitest";
import { loadConfig, runtimeSettings } from "./config.ts";
import { duration, helpText, parseSettings, setting } from "./settings.ts";

describe("loadConfig", () => {
  it("uses the defaults when nothing is set", () => {
    const config = loadConfig(runtimeSettings, [], {});
    expect(config["lease-duration"]).toBe(15_000);
    expect(config["renew-deadline"]).toBe(10_000);
    expect(config["retry-period"]).toBe(2_000);
    expect(config["max-concurrent-reconciles"]).toBe(8);
    expect(config["leader-elect"]).toBe(true);
    expect(config["cluster-secret-namespace"]).toBe("c5c3-clusters");
  });

  it("takes a flag over the environment over the default", () => {
    const env = { VHOST_BROKER_MAX_CONCURRENT_RECONCILES: "2", VHOST_BROKER_LOG_LEVEL: "debug" };
    const config = loadConfig(
      runtimeSettings,
      ["--max-concurrent-reconciles", "6", "--leader-elect=false"],
      env,
    );
    expect(config["max-concurrent-reconciles"]).toBe(6);
    expect(config["log-level"]).toBe("debug");
    expect(config["leader-elect"]).toBe(false);
    expect(
      loadConfig(runtimeSettings, ["--leader-elect"], { VHOST_BROKER_LEADER_ELECT: "false" })["leader-elect"],
    ).toBe(true);
  });

  it("refuses a bad value with a message naming the setting", () => {
    expect(() => loadConfig(runtimeSettings, ["--max-concurrent-reconciles=0"], {})).toThrow(
      /invalid setting max-concurrent-reconciles \(--max-concurrent-reconciles \/ VHOST_BROKER_MAX_CONCURRENT_RECONCILES, from --max-concurrent-reconciles\)/,
    );
    expect(() => loadConfig(runtimeSettings, [], { VHOST_BROKER_LEASE_DURATION: "fifteen" })).toThrow(
      /invalid setting lease-duration .*from VHOST_BROKER_LEASE_DURATION.*not a duration/,
    );
    expect(() => loadConfig(runtimeSettings, [], { VHOST_BROKER_LOG_LEVEL: "loud" })).toThrow(/log-level/);
    expect(() => loadConfig(runtimeSettings, ["--leader-elect=yes"], {})).toThrow(/leader-elect/);
    expect(() => loadConfig(runtimeSettings, ["--metrics-bind-address", "8080"], {})).toThrow(
      /metrics-bind-address/,
    );
  });

  it("refuses unknown flags and timings that contradict each other", () => {
    expect(() => loadConfig(runtimeSettings, ["--no-such-thing=1"], {})).toThrow(
      /unknown setting --no-such-thing/,
    );
    expect(() => loadConfig(runtimeSettings, ["stray"], {})).toThrow(/unexpected argument "stray"/);
    expect(() => loadConfig(runtimeSettings, ["--lease-duration=10s"], {})).toThrow(/lease-duration/);
    expect(() => loadConfig(runtimeSettings, ["--retry-period=9s"], {})).toThrow(/renew-deadline/);
  });

  it("refuses a deadline past 24h, which Node's timers would run at once, and takes a long wait", () => {
    expect(() => loadConfig(runtimeSettings, ["--reconcile-timeout=600h"], {})).toThrow(
      /reconcile-timeout .*must be at most 24h/,
    );
    expect(loadConfig(runtimeSettings, ["--reconcile-timeout=24h"], {})["reconcile-timeout"]).toBe(
      86_400_000,
    );
    expect(loadConfig(runtimeSettings, ["--drift-resync-max=720h"], {})["drift-resync-max"]).toBe(
      720 * 3_600_000,
    );
  });

  it("lets a component add its settings to the runtime's", () => {
    const group = {
      ...runtimeSettings,
      "backup-mount": setting({ description: "KV v2 mount", schema: z.string().min(1), default: "kv-v2" }),
      "rotation-period": setting({ description: "rotation", schema: duration }),
    };
    expect(() => loadConfig(group, [], {})).toThrow(/invalid setting rotation-period.*required/);
    const config = loadConfig(group, [], { VHOST_BROKER_ROTATION_PERIOD: "1h30m" });
    expect(config["rotation-period"]).toBe(5_400_000);
    expect(config["backup-mount"]).toBe("kv-v2");
    expect(helpText("vhost-broker", group)).toContain("--backup-mount, VHOST_BROKER_BACKUP_MOUNT");
  });
});

describe("help", () => {
  it("lists every setting with its variable and default", () => {
    const help = helpText("vhost-broker", runtimeSettings);
    for (const name of Object.keys(runtimeSettings)) expect(help).toContain(`--${name}, VHOST_BROKER_`);
    expect(help).toContain("(default: 15s)");
  });
});

describe("duration", () => {
  it("reads Go-style durations and refuses anything else", () => {
    expect(duration.parse("500ms")).toBe(500);
    expect(duration.parse("1m30s")).toBe(90_000);
    expect(duration.parse("0s")).toBe(0);
    expect(duration.safeParse("15").success).toBe(false);
    expect(duration.safeParse("").success).toBe(false);
    expect(duration.safeParse("1x").success).toBe(false);
    expect(duration.safeParse("-1s").success).toBe(false);
    expect(parseSettings({ d: setting({ description: "", schema: duration }) }, ["--d", "2h"], {}).d).toBe(
      7_200_000,
    );
  });
});
