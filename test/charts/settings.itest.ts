// deploy/vhost-broker rendered by `helm template` with every setting of the operator's table set:
// helm's check of values.schema.json lets each through, as a YAML value and as text, the chart passes
// each as exactly one VHOST_BROKER_<NAME> (those it owns from their own values; the MariaDB password as
// its file alone), and the binary's settings parser takes the rendered environment.
import { describe, expect, it } from "vitest";
import { chartOwnedSettings } from "../../scripts/gen-chart-schema.ts";
import { operatorSettings } from "../../src/operator/settings.ts";
import { settingsPassword } from "../../src/operator/sql.ts";
import { loadConfig } from "../../src/runtime/process/config.ts";
import { envName, type Setting } from "../../src/runtime/process/settings.ts";
import { manifestObjects, renderChart } from "../../harness/charts/helm.ts";

const table = operatorSettings as Record<string, Setting<unknown>>;

/** Where a setting has no useful default: a value the binary takes. */
const examples: Record<string, string> = {
  kubeconfig: "/etc/vhost-broker/kubeconfig",
  "openbao-address": "https://openbao.openbao.svc:8200",
  "openbao-role": "vhost-broker",
  "messaging-domain": ".cluster.local",
  "gatekeeper-custom-plugins": "/etc/vhost-broker/gatekeeper-plugins/audit.mjs",
  "mariadb-host": "mariadb.openstack.svc",
  "max-concurrent-reconciles": "4",
  "order-concurrent-reconciles": "12",
  "mariadb-port": "3307",
  "sweep-hold": "0",
  "openbao-auth": "kubernetes",
};

/** Every setting the values take, not at its default where it has a choice: booleans flipped. */
const chosen = Object.fromEntries(
  Object.entries(table)
    .filter(([name]) => !(name in chartOwnedSettings))
    .map(([name, d]) => [
      name,
      examples[name] ?? (d.boolean ? String(d.default !== "true") : (d.default ?? "")),
    ]),
);

/** The same as a values file would type them. */
const typed = Object.fromEntries(
  Object.entries(chosen).map(([name, text]) => [
    name,
    table[name]?.boolean ? text === "true" : /^\d+$/.test(text) ? Number(text) : text,
  ]),
);

/** The values that set the chart's own settings. */
const owning = {
  metrics: { port: 9443, secure: false, certSecret: "metrics-tls" },
  probePort: 9081,
  fullnameOverride: "platform-vhosts",
  openbao: { tokenSecret: { name: "openbao-token" } },
  brokerCA: { configMap: "broker-ca" },
  mariadb: {
    passwordSecret: { name: "mariadb-admin" },
    ca: { secret: "mariadb-tls" },
    clientCertSecret: "mariadb-client-tls",
  },
  rbac: { secretNamespaces: ["openstack", "tenant-a"] },
};

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: unknown;
}

async function renderedEnv(settings: Record<string, unknown>): Promise<EnvVar[]> {
  const objects = manifestObjects(
    await renderChart("vhost-broker", {
      release: "vb",
      namespace: "vb-system",
      values: { ...owning, settings },
    }),
  );
  const deployment = objects.find((o) => o.kind === "Deployment");
  const spec = deployment?.["spec"] as { template: { spec: { containers: { env: EnvVar[] }[] } } };
  return spec.template.spec.containers[0]?.env ?? [];
}

describe.each([
  { form: "YAML values", settings: typed },
  { form: "text", settings: chosen },
])("every setting, as $form", ({ settings }) => {
  const env = renderedEnv(settings);

  it("renders each setting of the table as one VHOST_BROKER_<NAME>, the chosen value for those of the values", async () => {
    const vars = await env;
    // The administrator's password is passed as mariadb-password-file only (the two exclude each other).
    for (const name of Object.keys(table))
      expect(vars.filter((v) => v.name === envName(name)).length, name).toBe(
        name === "mariadb-password" ? 0 : 1,
      );
    const value = (name: string) => vars.find((v) => v.name === envName(name))?.value;
    for (const [name, text] of Object.entries(chosen)) expect(value(name), name).toBe(text);
    expect(value("metrics-bind-address")).toBe(":9443");
    expect(value("leader-election-id")).toBe("platform-vhosts");
    expect(value("secret-namespaces")).toBe("openstack,tenant-a");
  });

  it("is an environment the binary's settings parser takes", async () => {
    const vars = await env;
    // What the kubelet fills in from the pod and from Secrets.
    const environment = Object.fromEntries(vars.map((v) => [v.name, v.value ?? "from-the-pod-or-a-secret"]));
    const config = loadConfig(operatorSettings, [], environment);
    expect(config["sql-controller"]).toBe(true);
    expect(config["mariadb-port"]).toBe(3307);
    expect(config["sweep-hold"]).toBe(0);
    expect(settingsPassword(config)).toEqual({ file: "/etc/vhost-broker/mariadb-password/password" });
    expect(config["topology-controller"]).toBe(false);
  });
});
