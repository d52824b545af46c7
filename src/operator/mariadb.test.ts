import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { defaultTransport } from "../mariadb/client.ts";
import { loadConfig } from "../runtime/process/config.ts";
import { mariadbTransport } from "./mariadb.ts";
import { operatorSettings } from "./settings.ts";

const dir = mkdtempSync(join(tmpdir(), "mariadb-transport-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const load = (...argv: string[]) =>
  loadConfig(operatorSettings, ["--openbao-address=http://bao:8200", ...argv], {});

describe("the MariaDB transport from the settings", () => {
  it("is the client's default transport when nothing is set", () => {
    expect(mariadbTransport(load())).toEqual({ ...defaultTransport, ca: undefined, client: undefined });
  });

  it("is plain by default, with the request and statement deadlines", () => {
    expect(mariadbTransport(load("--backend-request-timeout=3s"))).toEqual({
      tls: false,
      ca: undefined,
      client: undefined,
      connectTimeoutMs: 3_000,
      statementTimeoutMs: 30_000,
    });
  });

  it("turns TLS on by mariadb-tls, a CA file or a client certificate", () => {
    expect(mariadbTransport(load("--mariadb-tls")).tls).toBe(true);
    const ca = mariadbTransport(load(`--mariadb-ca-file=${file("ca.crt", "CA PEM")}`));
    expect(ca).toMatchObject({ tls: true, ca: "CA PEM" });
    const client = mariadbTransport(
      load(
        `--mariadb-tls-cert-file=${file("tls.crt", "CERT PEM")}`,
        `--mariadb-tls-key-file=${file("tls.key", "KEY PEM")}`,
      ),
    );
    expect(client).toMatchObject({ tls: true, client: { cert: "CERT PEM", key: "KEY PEM" } });
  });

  it("needs the client certificate and its key together, naming the one missing", () => {
    expect(() => mariadbTransport(load(`--mariadb-tls-cert-file=${file("only.crt", "x")}`))).toThrow(
      "invalid setting mariadb-tls-key-file: mariadb-tls-cert-file is set, so the client certificate needs both",
    );
    expect(() => mariadbTransport(load(`--mariadb-tls-key-file=${file("only.key", "x")}`))).toThrow(
      "invalid setting mariadb-tls-cert-file: mariadb-tls-key-file is set, so the client certificate needs both",
    );
  });

  it("names the setting and the path of a file it cannot read, never a file's content", () => {
    const key = file("secret.key", "PRIVATE KEY MATERIAL");
    const refused = () =>
      mariadbTransport(load("--mariadb-tls-cert-file=/nope/tls.crt", `--mariadb-tls-key-file=${key}`));
    expect(refused).toThrow("invalid setting mariadb-tls-cert-file: cannot read /nope/tls.crt");
    expect(refused).not.toThrow(/PRIVATE KEY MATERIAL/);
  });
});
