// The values the operator delivers, read by the parsers OpenStack services read them with (the local
// environment's pinned venv, OSLO_PYTHON): a RabbitMQVhost's transport_url through oslo.config (from a
// file and from OS_DEFAULT__TRANSPORT_URL) and oslo_messaging.TransportURL.parse; a MariaDBDatabase's
// connection, its database.conf snippet and a Connection's default snippet through oslo.config (a conf.d folder, as
// OpenStack-Helm's pod.etcSources mounts it) and SQLAlchemy's make_url, which oslo.db's engine facade
// calls. Each value holds what the URLs and oslo.config treat as syntax: '$' (oslo.config's
// interpolation), ',' (oslo.messaging's second host), '@', ':', '/', '%', '#', ';', '?', and a space.
// The first test shows the parsers trip on those characters unescaped, so the rest measure the escaping.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { connectionUrl, deliveredData, osloConfSnippet } from "../../src/orders/mariadb/delivered-data.ts";
import { transportUrl } from "../../src/orders/rabbitmq/delivered-data.ts";
import { secretData } from "../../src/sql/kinds/connection-secret.ts";
import { localEnv } from "../../harness/world/env.ts";

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "oslo-parsers-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Reads each case's text as oslo.config reads a service's files (a conf.d folder of *.conf files) or
// its environment (OS_DEFAULT__TRANSPORT_URL), then the option's value as oslo.messaging or SQLAlchemy
// parses it. Prints one JSON result per case; a parser's exception is a result too.
const script = String.raw`
import json, os, sys, tempfile, warnings
warnings.simplefilter("ignore")
from oslo_config import cfg
import oslo_messaging
from oslo_db import options as db_options
from sqlalchemy.engine import make_url

def conf_of(text, env):
    folder = tempfile.mkdtemp(dir=sys.argv[1])
    os.makedirs(os.path.join(folder, "svc.conf.d"))
    with open(os.path.join(folder, "svc.conf.d", "delivered.conf"), "w") as f:
        f.write(text or "")
    for k in [k for k in os.environ if k.startswith("OS_DEFAULT__")]:
        del os.environ[k]
    os.environ.update(env or {})
    conf = cfg.ConfigOpts()
    db_options.set_defaults(conf)
    conf(args=["--config-dir", os.path.join(folder, "svc.conf.d")], project="svc", default_config_files=[])
    return conf

out = []
for case in json.load(sys.stdin):
    try:
        conf = conf_of(case.get("file"), case.get("env"))
        if case["parser"] == "messaging":
            url = oslo_messaging.TransportURL.parse(conf)
            out.append({"hosts": [{"username": h.username, "password": h.password, "hostname": h.hostname,
                                   "port": h.port} for h in url.hosts],
                        "virtual_host": url.virtual_host})
        else:
            url = make_url(conf.database.connection)
            out.append({"username": url.username, "password": url.password, "host": url.host, "port": url.port,
                        "database": url.database, "query": dict(url.query)})
    except Exception as e:
        out.append({"error": type(e).__name__})
print(json.dumps(out))
`;

interface Case {
  parser: "messaging" | "sql";
  file?: string;
  env?: Record<string, string>;
}

async function parse(cases: Case[]): Promise<Record<string, unknown>[]> {
  const child = run(localEnv().OSLO_PYTHON, ["-W", "ignore", "-c", script, dir], { timeout: 60_000 });
  child.child.stdin?.end(JSON.stringify(cases));
  const { stdout } = await child;
  return JSON.parse(stdout) as Record<string, unknown>[];
}

/** Values that hold every character the URLs and oslo.config read as syntax. */
const hostile = ["a$b", "$$", "${x}", "a,b", "u@h:1/d", "100%", "#x;y?z", "$a,b@c:d/e%f#g h"];

describe("what OpenStack's parsers read from the delivered values", () => {
  it("trips on those characters unescaped: the check below measures the escaping", async () => {
    const [dollar, twice, comma, hosts] = await parse([
      { parser: "messaging", file: "[DEFAULT]\ntransport_url = rabbit://u:p$x@h:5672/v\n" },
      { parser: "messaging", file: "[DEFAULT]\ntransport_url = rabbit://u:p$$x@h:5672/v\n" },
      { parser: "messaging", file: "[DEFAULT]\ntransport_url = rabbit://u:p,x@h:5672/v\n" },
      { parser: "messaging", file: "[DEFAULT]\ntransport_url = rabbit://u,x:p@h:5672/v\n" },
    ]);
    // '$x' names an option oslo.config does not know; '$$' silently reads as one '$'.
    expect(dollar).toEqual({ error: "NoSuchOptError" });
    expect((twice as { hosts: { password: string }[] }).hosts[0]?.password).toBe("p$x");
    // ',' starts another host: here one without a port number, there a host "u" and a user "x".
    expect(comma).toEqual({ error: "ValueError" });
    expect((hosts as { hosts: unknown[] }).hosts).toHaveLength(2);
  });

  it("reads a RabbitMQVhost's transport_url as delivered, from a file and from OS_DEFAULT__TRANSPORT_URL", async () => {
    const values = hostile.map((v, i) => ({
      username: `user-${v}`,
      password: `pw-${v}`,
      host: i % 2 ? "fd00::1" : "rabbitmq.openstack.svc",
      port: 5672,
      vhost: `vhost-${v}`,
    }));
    const urls = values.map((c) => transportUrl(c));
    for (const url of urls) expect(url).not.toMatch(/[$,]/);
    const parsed = await parse([
      ...urls.map((url): Case => ({ parser: "messaging", file: `[DEFAULT]\ntransport_url = ${url}\n` })),
      ...urls.map((url): Case => ({ parser: "messaging", env: { OS_DEFAULT__TRANSPORT_URL: url } })),
    ]);
    const expected = values.map((c) => ({
      hosts: [{ username: c.username, password: c.password, hostname: c.host, port: 5672 }],
      virtual_host: c.vhost,
    }));
    expect(parsed).toEqual([...expected, ...expected]);
  });

  it("reads a MariaDBDatabase's connection as delivered, with and without TLS", async () => {
    const logins = hostile.map((v, i) => ({
      endpoint: { host: i % 2 ? "fd00::1" : "mariadb.openstack.svc", port: 3306 },
      // A databaseName holds letters, digits, '_' and '$' (the CRD); the account and password anything.
      database: `db_${v.replace(/[^A-Za-z0-9_$]/g, "_")}`,
      username: `user-${v}`,
      password: `pw-${v}`,
      tlsDir: i % 2 ? "/etc/mysql/certs" : undefined,
    }));
    // The Secret's database.conf as it is: the [database] snippet of exactly its connection.
    const files = logins.map((l) => deliveredData(l)["database.conf"] ?? "");
    expect(files).toEqual(logins.map((l) => `[database]\nconnection = ${connectionUrl(l)}\n`));
    const parsed = await parse(files.map((file): Case => ({ parser: "sql", file })));
    expect(parsed).toEqual(
      logins.map((l) => ({
        username: l.username,
        password: l.password,
        host: l.endpoint.host,
        port: 3306,
        database: l.database,
        query: {
          charset: "utf8",
          ...(l.tlsDir
            ? {
                ssl_ca: "/etc/mysql/certs/ca.crt",
                ssl_cert: "/etc/mysql/certs/tls.crt",
                ssl_key: "/etc/mysql/certs/tls.key",
              }
            : {}),
        },
      })),
    );
  });

  it("reads a '$' that reached a MariaDBDatabase's database.conf as the '$' it was", async () => {
    const url = "mysql+pymysql://u$a:p$$b${c}@db:3306/d?charset=utf8";
    const [parsed] = await parse([{ parser: "sql", file: osloConfSnippet(url) }]);
    expect(parsed).toEqual({
      username: "u$a",
      password: "p$$b${c}",
      host: "db",
      port: 3306,
      database: "d",
      query: { charset: "utf8" },
    });
  });

  it("reads a Connection's default snippet as the SQL controller writes it", async () => {
    const values = hostile.map((v) => ({
      username: `user-${v}`,
      password: `pw-${v}`,
      host: "mariadb.openstack.svc.cluster.local",
      port: 3306,
      database: `db-${v}`,
      params: { ssl_ca: `/certs/${v}` },
    }));
    const parsed = await parse(
      values.map((v): Case => ({ parser: "sql", file: secretData(undefined, v)["database.conf"] ?? "" })),
    );
    expect(parsed).toEqual(
      values.map((v) => ({
        username: v.username,
        password: v.password,
        host: v.host,
        port: 3306,
        database: v.database,
        query: { charset: "utf8", ssl_ca: v.params.ssl_ca },
      })),
    );
  });
});
