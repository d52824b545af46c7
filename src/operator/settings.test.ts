import { describe, expect, it } from "vitest";
import { loadConfig } from "../runtime/process/config.ts";
import { backupSettings } from "./backup.ts";
import { operatorSettings } from "./settings.ts";
import { settingsPassword, sqlDeps } from "./sql.ts";

const load = (argv: string[], env: Record<string, string> = {}) => loadConfig(operatorSettings, argv, env);

describe("operator settings", () => {
  it("requires the OpenBao address and names it", () => {
    expect(() => load([])).toThrow(
      /invalid setting openbao-address \(--openbao-address \/ VHOST_BROKER_OPENBAO_ADDRESS/,
    );
  });

  it("reads flags and VHOST_BROKER_* variables, the flag winning", () => {
    const config = load(["--openbao-address=http://bao:8200", "--topology-verification-period=30s"], {
      VHOST_BROKER_TOPOLOGY_VERIFICATION_PERIOD: "1m",
      VHOST_BROKER_TOPOLOGY_CONTROLLER: "false",
    });
    expect(config["topology-verification-period"]).toBe(30_000);
    expect(config["topology-controller"]).toBe(false);
    expect(config["openbao-mount"]).toBe("kv-v2");
  });

  it("refuses a malformed topology-clusters selection", () => {
    expect(() => load(["--openbao-address=http://bao:8200", "--topology-clusters=some"])).toThrow(
      /invalid setting topology-clusters/,
    );
  });

  it("names the OpenBao token when token auth has none, without printing any value", () => {
    const config = load(["--openbao-address=http://bao:8200"]);
    expect(() => backupSettings(config)).toThrow(/invalid setting openbao-token/);
    const withToken = backupSettings(
      load(["--openbao-address=http://bao:8200"], { VHOST_BROKER_OPENBAO_TOKEN: "s3cr3t" }),
    );
    expect(withToken.auth).toEqual({ method: "token", token: "s3cr3t" });
  });

  it("needs a role for Kubernetes auth", () => {
    const config = load(["--openbao-address=http://bao:8200", "--openbao-auth=kubernetes"]);
    expect(() => backupSettings(config)).toThrow(/invalid setting openbao-role/);
  });

  it("keeps the SQL controller off by default; on, it needs no address (ControlPlanes may declare every server)", async () => {
    const off = load(["--openbao-address=http://bao:8200"]);
    expect(off["sql-controller"]).toBe(false);
    expect(off["mariadb-port"]).toBe(3306);
    const on = load(["--openbao-address=http://bao:8200", "--sql-controller"], {
      VHOST_BROKER_MARIADB_PASSWORD: "s3cr3t",
      VHOST_BROKER_MARIADB_PORT: "3307",
    });
    expect(on["mariadb-port"]).toBe(3307);
    expect(
      sqlDeps(on, { now: () => 0, monotonic: () => 0, setTimer: () => ({ cancel() {} }) }).servers,
    ).toBeDefined();
    expect(() => load(["--openbao-address=http://bao:8200", "--sql-mariadb-refs=annotation:x"])).toThrow(
      /invalid setting sql-mariadb-refs/,
    );
    expect(() => load(["--openbao-address=http://bao:8200", "--mariadb-port=70000"])).toThrow(
      /invalid setting mariadb-port/,
    );
    const withCa = load([
      "--openbao-address=http://bao:8200",
      "--mariadb-host=db",
      "--mariadb-ca-file=/nope",
    ]);
    expect(() =>
      sqlDeps(withCa, { now: () => 0, monotonic: () => 0, setTimer: () => ({ cancel() {} }) }),
    ).toThrow(/invalid setting mariadb-ca-file: cannot read \/nope/);
  });

  it("takes the settings' server's password from a file or from the environment, refusing both and naming them", () => {
    const base = "--openbao-address=http://bao:8200";
    const secret = { VHOST_BROKER_MARIADB_PASSWORD: "s3cr3t" };
    const file = "--mariadb-password-file=/etc/vhost-broker/mariadb-password/password";
    expect(settingsPassword(load([base], secret))).toEqual({ value: "s3cr3t" });
    expect(settingsPassword(load([base, file]))).toEqual({
      file: "/etc/vhost-broker/mariadb-password/password",
    });
    const both = () => settingsPassword(load([base, file], secret));
    expect(both).toThrow(
      "invalid setting mariadb-password-file: mariadb-password (VHOST_BROKER_MARIADB_PASSWORD) is set too; set one of them, not both",
    );
    expect(both).not.toThrow(/s3cr3t/);
    expect(() =>
      sqlDeps(load([base, "--sql-controller", file], secret), {
        now: () => 0,
        monotonic: () => 0,
        setTimer: () => ({ cancel() {} }),
      }),
    ).toThrow(/mariadb-password-file/);
  });
});
