// The process's one way to MariaDB, built from its settings: TLS (mariadb-tls, or implied by a CA or a
// client certificate), the CA, the client certificate and key, the connect and statement deadlines. The
// SQL controller and the MariaDBDatabase order leg share it (src/mariadb/client.ts). A file that cannot
// be read stops start-up naming the setting and the path, never the content.
import { readFileSync } from "node:fs";
import type { MariaDBTransport } from "../mariadb/client.ts";
import { SettingsError } from "../runtime/process/settings.ts";
import type { OperatorConfig } from "./settings.ts";

type FileSetting = "mariadb-ca-file" | "mariadb-tls-cert-file" | "mariadb-tls-key-file";

function readSetting(config: OperatorConfig, name: FileSetting): string | undefined {
  const path = config[name];
  if (!path) return undefined;
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    throw new SettingsError(`invalid setting ${name}: cannot read ${path}`, { cause: error });
  }
}

export function mariadbTransport(config: OperatorConfig): MariaDBTransport {
  const certFile = config["mariadb-tls-cert-file"];
  const keyFile = config["mariadb-tls-key-file"];
  if (Boolean(certFile) !== Boolean(keyFile)) {
    const [set, unset] = certFile
      ? ["mariadb-tls-cert-file", "mariadb-tls-key-file"]
      : ["mariadb-tls-key-file", "mariadb-tls-cert-file"];
    throw new SettingsError(`invalid setting ${unset}: ${set} is set, so the client certificate needs both`);
  }
  const ca = readSetting(config, "mariadb-ca-file");
  const cert = readSetting(config, "mariadb-tls-cert-file");
  const key = readSetting(config, "mariadb-tls-key-file");
  const client = cert !== undefined && key !== undefined ? { cert, key } : undefined;
  return {
    tls: config["mariadb-tls"] || ca !== undefined || client !== undefined,
    ca,
    client,
    connectTimeoutMs: config["backend-request-timeout"],
    statementTimeoutMs: config["mariadb-statement-timeout"],
  };
}
