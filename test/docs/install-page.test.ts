// docs/install.md as a person pastes it: every helm install and upgrade names only values the chart's
// schema knows, with the values files the page wrote before and never --reuse-values; every manifest
// parses, is a kind the CRDs or Kubernetes define and has only fields its schema has; every
// `kubectl wait --for=condition=` names a condition of its kind; every namespace a command uses was
// created earlier on the page; and the settings and values named in the prose exist.
// install-page.itest.ts runs what of this the local environment can: the manifests and the rendered
// chart, admitted by the API server in a server-side dry run.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { chartOwnedSettings } from "../../scripts/gen-chart-schema.ts";
import { localEnvCrds, shippedCrds } from "../../src/api/crds.ts";
import { operatorSettings } from "../../src/operator/settings.ts";
import { DELIVERY_READY, READY } from "../../src/orders/core/conditions.ts";
import { RECONCILING, STALLED } from "../../src/orders/core/health.ts";
import { DATABASE_READY } from "../../src/orders/mariadb/conditions.ts";
import { VHOST_READY } from "../../src/orders/rabbitmq/conditions.ts";
import {
  INSTALL_PAGES,
  appliesManifest,
  blocksOf,
  commandsOf,
  helmCommand,
  helmRuns,
  installCommands,
  mergeValues,
  readPage,
  wordsOf,
  writtenFile,
  type Command,
} from "./install-page.ts";

type Schema = Record<string, unknown> & {
  type?: string | string[];
  properties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
  items?: Schema;
  required?: string[];
  enum?: unknown[];
  pattern?: string;
  minLength?: number;
  "x-kubernetes-preserve-unknown-fields"?: boolean;
  "x-kubernetes-int-or-string"?: boolean;
};

const valuesSchema = JSON.parse(
  readFileSync(new URL("../../deploy/vhost-broker/values.schema.json", import.meta.url), "utf8"),
) as Schema;
const chartDefaults = parse(
  readFileSync(new URL("../../deploy/vhost-broker/values.yaml", import.meta.url), "utf8"),
) as Record<string, unknown>;

const commands = installCommands();
const helm = commands.flatMap((c) => {
  const h = helmCommand(c);
  return h ? [{ command: c, helm: h }] : [];
});

const typeOf = (value: unknown): string =>
  value === null
    ? "null"
    : Array.isArray(value)
      ? "array"
      : typeof value === "number" && Number.isInteger(value)
        ? "integer"
        : typeof value;

/**
 * What of `value` the schema refuses, by path: the keywords the chart's schema and the CRDs use (type,
 * enum, pattern, minLength, properties with additionalProperties false or a structural schema's
 * pruning, items, required).
 */
function refusals(schema: Schema, value: unknown, path: string, structural: boolean): string[] {
  const problems: string[] = [];
  const types = ([] as string[]).concat(schema.type ?? []);
  const actual = typeOf(value);
  const intOrString = schema["x-kubernetes-int-or-string"] && (actual === "integer" || actual === "string");
  if (
    types.length > 0 &&
    !intOrString &&
    !types.includes(actual) &&
    !(actual === "integer" && types.includes("number"))
  )
    problems.push(`${path}: ${actual}, not ${types.join(" or ")}`);
  if (schema.enum && !schema.enum.includes(value))
    problems.push(`${path}: ${String(value)} is not one of its values`);
  if (typeof value === "string") {
    if (schema.pattern && !new RegExp(schema.pattern, "u").test(value))
      problems.push(`${path}: "${value}" fails its pattern`);
    if (schema.minLength !== undefined && value.length < schema.minLength)
      problems.push(`${path}: too short`);
  }
  if (actual === "array" && schema.items)
    (value as unknown[]).forEach((item, i) =>
      problems.push(...refusals(schema.items as Schema, item, `${path}[${i}]`, structural)),
    );
  if (actual === "object" && !schema["x-kubernetes-preserve-unknown-fields"]) {
    const object = value as Record<string, unknown>;
    for (const key of schema.required ?? []) if (!(key in object)) problems.push(`${path}.${key}: required`);
    for (const [key, child] of Object.entries(object)) {
      const property = schema.properties?.[key];
      if (property) problems.push(...refusals(property, child, `${path}.${key}`, structural));
      else if (typeof schema.additionalProperties === "object")
        problems.push(...refusals(schema.additionalProperties, child, `${path}.${key}`, structural));
      else if (schema.additionalProperties === false || (structural && schema.properties))
        problems.push(`${path}.${key}: no such field`);
    }
  }
  return problems;
}

/** The schema node of a dotted values path (`metrics.serviceMonitor.enabled`), or undefined. */
function valuesNode(path: string): Schema | undefined {
  let node: Schema | undefined = valuesSchema;
  for (const key of path.split(".")) {
    if (key === "*") return node;
    node =
      node?.properties?.[key] ??
      (typeof node?.additionalProperties === "object" ? node.additionalProperties : undefined);
  }
  return node;
}

const crds = [...shippedCrds(), ...localEnvCrds()];
type Crd = (typeof crds)[number];
const crdOf = (apiVersion: string, kind: string): Crd | undefined =>
  crds.find(
    (c) =>
      c.spec.names.kind === kind && c.spec.versions.some((v) => `${c.spec.group}/${v.name}` === apiVersion),
  );

/** The Kubernetes kinds the pages may apply, with whether they are namespaced. */
const builtIn: Record<string, boolean> = {
  "v1/Namespace": false,
  "v1/Secret": true,
  "v1/ConfigMap": true,
  "v1/ServiceAccount": true,
  "rbac.authorization.k8s.io/v1/ClusterRoleBinding": false,
};

/** The conditions the order kinds write (their status says so); other kinds': what their CRD names. */
const orderConditions = [READY, DELIVERY_READY, RECONCILING, STALLED];
function conditionsOf(crd: Crd): string[] {
  const named = [...JSON.stringify(crd).matchAll(/type==\\?'(\w+)\\?'/g)].map((m) => m[1] as string);
  if (crd.spec.names.kind === "RabbitMQVhost") return [...orderConditions, VHOST_READY, ...named];
  if (crd.spec.names.kind === "MariaDBDatabase") return [...orderConditions, DATABASE_READY, ...named];
  return named;
}

const manifests = (): { command: Command; objects: Record<string, unknown>[] }[] =>
  commands.filter(appliesManifest).map((command) => ({
    command,
    objects: parseAllDocuments(command.heredoc ?? "").map((d) => {
      expect(d.errors, command.line).toEqual([]);
      return d.toJS() as Record<string, unknown>;
    }),
  }));

describe("the command reader", () => {
  it("splits words as the shell does for the pages' quoting", () => {
    expect(wordsOf(`kubectl get secret x -o jsonpath='{.data.token}' | base64 -d  # why`)).toEqual([
      "kubectl",
      "get",
      "secret",
      "x",
      "-o",
      "jsonpath={.data.token}",
      "|",
      "base64",
      "-d",
    ]);
    expect(wordsOf(`bao write a token_reviewer_jwt="$(kubectl get s -o 'x' | base64 -d)" b=@c`)).toEqual([
      "bao",
      "write",
      "a",
      "token_reviewer_jwt=$(kubectl get s -o 'x' | base64 -d)",
      "b=@c",
    ]);
  });

  it("joins continuation lines and attaches a heredoc to its command", () => {
    const parsed = commandsOf({
      page: "p",
      lang: "sh",
      text: "cat >v.yaml <<'EOF'\na: 1\nEOF\nhelm upgrade r deploy/c \\\n  -f v.yaml --set x.y=z,w=1 --reuse-values\n",
    });
    expect(parsed.map((c) => [c.line, c.heredoc])).toEqual([
      ["cat >v.yaml", "a: 1\n"],
      ["helm upgrade r deploy/c  -f v.yaml --set x.y=z,w=1 --reuse-values", undefined],
    ]);
    expect(writtenFile(parsed[0] as Command)).toBe("v.yaml");
    expect(helmCommand(parsed[1] as Command)).toEqual({
      verb: "upgrade",
      release: "r",
      chart: "deploy/c",
      valuesFiles: ["v.yaml"],
      set: [
        ["x.y", "z"],
        ["w", "1"],
      ],
      flags: ["--reuse-values"],
    });
  });

  it("finds a field the schema does not have, a wrong type and a missing required one", () => {
    const schema: Schema = {
      type: "object",
      required: ["a"],
      properties: {
        a: { type: "string", enum: ["x"] },
        b: { type: "object", properties: { c: { type: "boolean" } } },
      },
    };
    expect(refusals(schema, { a: "x", b: { c: true } }, "", true)).toEqual([]);
    expect(refusals(schema, { b: { c: "yes", d: 1 } }, "", true)).toEqual([
      ".a: required",
      ".b.c: string, not boolean",
      ".b.d: no such field",
    ]);
  });
});

describe("docs/install.md's helm commands", () => {
  it("install the chart once and upgrade it, in its release namespace, never with --reuse-values", () => {
    const verbs = helm.map((h) => h.helm.verb);
    expect(verbs[0]).toBe("install");
    expect(verbs).toContain("upgrade");
    for (const { command, helm: h } of helm) {
      expect(h.chart, command.line).toBe("deploy/vhost-broker");
      expect(h.release, command.line).toBe("vhost-broker");
      expect(h.namespace, command.line).toBe("vhost-broker-system");
      expect(h.flags, command.line).not.toContain("--reuse-values");
      expect(h.valuesFiles[0], `${command.line}: values.yaml first`).toBe("values.yaml");
    }
  });

  it("pass only values files the page wrote before, and the values of each are what the schema takes", () => {
    const runs = helmRuns(commands);
    expect(runs.length).toBe(helm.length);
    for (const run of runs) {
      for (const file of run.files)
        expect(file.text, `${run.command.line}: ${file.name} is not written before`).toBeDefined();
      for (const [key] of run.helm.set)
        expect(valuesNode(key), `${run.command.line}: --set ${key}`).toBeDefined();
      const values = mergeValues(structuredClone(chartDefaults), run.values);
      expect(refusals(valuesSchema, values, "values", false), run.command.line).toEqual([]);
    }
    expect(runs.flatMap((r) => r.files.map((f) => f.name))).toEqual(
      expect.arrayContaining(["values.yaml", "monitoring.yaml", "mariadb.yaml", "secret-namespaces.yaml"]),
    );
  });

  it("log in to OpenBao the way the OpenBao steps set up, with the mount the policy names", () => {
    const first = commands.find((c) => writtenFile(c) === "values.yaml");
    const settings = (parse(first?.heredoc ?? "") as { settings: Record<string, unknown> }).settings;
    expect(settings["openbao-auth"]).toBe("kubernetes");
    const page = readPage("docs/install.md");
    const role = commands.find((c) => c.line.startsWith("bao write auth/kubernetes/role/"));
    expect(role?.words[2]).toBe(`auth/kubernetes/role/${String(settings["openbao-role"])}`);
    expect(role?.words).toEqual(
      expect.arrayContaining([
        "bound_service_account_names=vhost-broker",
        "bound_service_account_namespaces=vhost-broker-system",
        `audience=${(chartDefaults["openbao"] as { serviceAccountToken: { audience: string } }).serviceAccountToken.audience}`,
      ]),
    );
    const mount = commands.find((c) => /^MOUNT=/.test(c.line))?.line.slice("MOUNT=".length);
    expect(mount).toBe(settings["openbao-mount"] ?? operatorSettings["openbao-mount"].default);
    for (const policy of commands.filter((c) => c.line.startsWith("bao policy write")))
      for (const path of (policy.heredoc ?? "").matchAll(/^path "([^"]+)"/gm))
        expect(path[1], policy.line).toMatch(/^\$MOUNT\/(data|metadata)\/openstack\//);
    expect(page).toContain("create configmap openbao-ca");
    expect(
      (parse(first?.heredoc ?? "") as { openbao: { ca: { configMap: string } } }).openbao.ca.configMap,
    ).toBe("openbao-ca");
  });
});

describe("docs/install.md's manifests", () => {
  it("parse, and are kinds the CRDs or Kubernetes define, with only the fields their schema has", () => {
    const applied = manifests();
    expect(applied.map((m) => m.objects.map((o) => o["kind"]).join())).toEqual(
      expect.arrayContaining(["RabbitmqCluster", "ControlPlane", "RabbitMQVhost", "MariaDBDatabase"]),
    );
    for (const { command, objects } of applied)
      for (const object of objects) {
        const { apiVersion, kind } = object as { apiVersion: string; kind: string };
        const crd = crdOf(apiVersion, kind);
        const where = `${command.page}: ${apiVersion} ${kind}`;
        expect(crd !== undefined || `${apiVersion}/${kind}` in builtIn, `${where} is not a known kind`).toBe(
          true,
        );
        if (!crd) continue;
        const version = crd.spec.versions.find((v) => `${crd.spec.group}/${v.name}` === apiVersion);
        const schema = version?.schema?.openAPIV3Schema as Schema;
        const { metadata: _metadata, ...rest } = object;
        expect(refusals({ ...schema, required: [] }, rest, kind, true), where).toEqual([]);
      }
  });

  it("the yaml blocks of the install path parse", () => {
    for (const page of INSTALL_PAGES)
      for (const block of blocksOf(page).filter((b) => b.lang === "yaml"))
        expect(
          parseAllDocuments(block.text).flatMap((d) => d.errors),
          page,
        ).toEqual([]);
  });
});

describe("docs/install.md's order of steps", () => {
  it("creates every namespace before a command or manifest uses it", () => {
    const created = new Set(["default", "kube-system"]);
    for (const command of commands) {
      const w = command.words;
      if (w[0] === "kubectl" && w[1] === "create" && w[2] === "namespace") created.add(w[3] as string);
      const used = w.flatMap((word, i) =>
        word === "-n" || word === "--namespace"
          ? [w[i + 1] as string]
          : word.startsWith("--serviceaccount=")
            ? [word.slice("--serviceaccount=".length).split(":")[0] as string]
            : [],
      );
      if (appliesManifest(command))
        for (const doc of parseAllDocuments(command.heredoc ?? "")) {
          const o = doc.toJS() as { apiVersion: string; kind: string; metadata: { namespace?: string } };
          const namespaced =
            crdOf(o.apiVersion, o.kind)?.spec.scope === "Namespaced" || builtIn[`${o.apiVersion}/${o.kind}`];
          if (namespaced) {
            expect(o.metadata.namespace, `${command.page}: ${o.kind} names no namespace`).toBeDefined();
            used.push(o.metadata.namespace as string);
          }
        }
      for (const ns of used)
        expect(created.has(ns), `${command.page}: ${command.line} uses ${ns} before it exists`).toBe(true);
    }
  });

  it("applies the ControlPlane only after the chart installed its CRD", () => {
    const install = commands.findIndex((c) => helmCommand(c)?.verb === "install");
    const controlPlane = commands.findIndex(
      (c) => appliesManifest(c) && /kind: ControlPlane/.test(c.heredoc ?? ""),
    );
    expect(install).toBeGreaterThanOrEqual(0);
    expect(controlPlane).toBeGreaterThan(install);
  });

  it("waits only for conditions its kinds have", () => {
    // A wait for a condition; a jsonpath wait (the reviewer's token) is run by install-openbao.itest.ts.
    const waits = commands.filter(
      (c) =>
        c.words[0] === "kubectl" &&
        c.words.includes("wait") &&
        c.words.some((w) => w.startsWith("--for=condition=")),
    );
    expect(waits.length).toBeGreaterThanOrEqual(2);
    for (const command of waits) {
      const target = command.words.find((w) => w.includes("/") && !w.startsWith("-")) ?? "";
      const resource = target.split("/")[0] as string;
      const condition = command.words
        .find((w) => w.startsWith("--for=condition="))
        ?.slice("--for=condition=".length);
      const crd = crds.find((c) =>
        [c.spec.names.singular, c.spec.names.plural, ...(c.spec.names.shortNames ?? [])].includes(resource),
      );
      expect(crd, `${command.line}: no CRD serves ${resource}`).toBeDefined();
      expect(conditionsOf(crd as Crd), command.line).toContain(condition);
    }
    expect(waits.map((c) => c.words.find((w) => w.startsWith("--for=")))).toContain("--for=condition=Ready");
  });

  it("verifies the Lease, a Ready order and the delivered Secret", () => {
    const lines = commands.map((c) => c.line);
    expect(lines).toContain("kubectl get lease -n vhost-broker-system");
    expect(lines).toContain(
      "kubectl -n tenant-a wait rabbitmqvhost/workflow --for=condition=Ready --timeout=5m",
    );
    expect(lines.some((l) => l.startsWith("kubectl -n tenant-a get secret workflow-credentials"))).toBe(true);
  });
});

describe("the install path's prose", () => {
  const prose = INSTALL_PAGES.map((page) => readPage(page)).join("\n");
  const code = [...prose.matchAll(/`([^`\n]+)`/g)].map((m) => m[1] as string);

  it("names only settings the operator has", () => {
    const settings = new Set(Object.keys(operatorSettings));
    const named = code.flatMap((c) =>
      [...c.matchAll(/(?:^|\s)settings\.([a-z0-9-]+)/g)].map((m) => m[1] as string),
    );
    expect(named.length).toBeGreaterThan(5);
    for (const name of named) expect(settings, `settings.${name}`).toContain(name);
    const helmFlags = new Set([
      "set",
      "set-json",
      "values",
      "reuse-values",
      "reset-then-reuse-values",
      "create-namespace",
      "server-side",
      "dry-run",
    ]);
    for (const flag of code.flatMap((c) => [...c.matchAll(/^--([a-z0-9-]+)$/g)].map((m) => m[1] as string)))
      if (!helmFlags.has(flag)) expect(settings, `--${flag}`).toContain(flag);
  });

  it("names only values the chart has", () => {
    const tops = new Set(Object.keys(valuesSchema.properties ?? {}));
    const paths = code
      .map((c) => c.split("=")[0] as string)
      .filter((c) => /^[a-z][A-Za-z]*(\.[A-Za-z0-9*-]+)+$/.test(c))
      .filter((c) => tops.has(c.split(".")[0] as string))
      .filter((c) => !/\.(io|org|com|svc|md|yaml|json|ts|crt)$/.test(c) && !c.includes(".osh."));
    expect(paths.length).toBeGreaterThan(20);
    // A setting the chart sets from other values is named only to say the schema refuses it.
    const refused = (path: string) => path.startsWith("settings.") && path.slice(9) in chartOwnedSettings;
    for (const path of paths) if (!refused(path)) expect(valuesNode(path), path).toBeDefined();
  });
});
