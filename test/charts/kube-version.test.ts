// Each chart's kubeVersion and the minimum docs/install.md states are at least the newest Kubernetes
// version whose CEL the chart's CRDs use in their validation rules (test/charts/cel-versions.ts).
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  VALIDATION_RULES,
  celFunctions,
  compareVersions,
  formatVersion,
  functionsOf,
  parseKubeVersion,
  type KubeVersion,
} from "./cel-versions.ts";

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");
const install = read("docs/install.md");

const charts = [
  {
    chart: "deploy/vhost-broker",
    crds: "deploy/vhost-broker/files/crds",
    docs: /Kubernetes (\S+) or newer on\s+the\s+management cluster/,
  },
  {
    chart: "deploy/target-cluster-access",
    crds: "deploy/target-cluster-access/crds",
    docs: /Kubernetes (\S+) or newer on\s+each\s+target cluster/,
  },
];

type Validation = Record<string, unknown>;

function validationsOf(node: unknown, found: Validation[] = []): Validation[] {
  if (Array.isArray(node)) for (const item of node) validationsOf(item, found);
  else if (node && typeof node === "object") {
    for (const [key, value] of Object.entries(node)) {
      if (key === "x-kubernetes-validations") found.push(...(value as Validation[]));
      validationsOf(value, found);
    }
  }
  return found;
}

/** The newest version the rules need, and what the table does not know (functions, rule fields). */
function requirement(validations: Validation[]): { needs: KubeVersion; by: string[]; unknown: string[] } {
  let needs = VALIDATION_RULES;
  let by: string[] = ["validation rules"];
  const unknown = new Set<string>();
  for (const validation of validations) {
    for (const key of Object.keys(validation))
      if (key !== "rule" && key !== "message") unknown.add(`field ${key}`);
    for (const name of functionsOf(String(validation["rule"]))) {
      const known = celFunctions.get(name);
      if (!known) unknown.add(name);
      else if (compareVersions(known.since, needs) > 0)
        [needs, by] = [known.since, [`${name} (${known.library})`]];
      else if (compareVersions(known.since, needs) === 0 && !by.some((b) => b.startsWith(`${name} `)))
        by.push(`${name} (${known.library})`);
    }
  }
  return { needs, by, unknown: [...unknown] };
}

const lowerBound = (constraint: string): KubeVersion | undefined => {
  const m = />=\s*v?(\d+\.\d+)/.exec(constraint);
  return m?.[1] ? parseKubeVersion(m[1]) : undefined;
};

describe.each(charts)("$chart", ({ chart, crds, docs }) => {
  const files = readdirSync(new URL(`../../${crds}`, import.meta.url)).filter((f) => f.endsWith(".yaml"));
  const validations = files.flatMap((f) => validationsOf(parse(read(`${crds}/${f}`))));
  const { needs, by, unknown } = requirement(validations);

  it("uses only CEL whose Kubernetes version the table knows", () => {
    expect(validations.length).toBeGreaterThan(0);
    expect(unknown).toEqual([]);
  });

  it(`states a kubeVersion and a documented minimum no older than its CRDs' CEL needs`, () => {
    const kubeVersion = (parse(read(`${chart}/Chart.yaml`)) as { kubeVersion?: string }).kubeVersion ?? "";
    const bound = lowerBound(kubeVersion);
    expect(bound, `Chart.yaml kubeVersion "${kubeVersion}" has no >= bound`).toBeDefined();
    const documented = docs.exec(install)?.[1];
    expect(documented, `docs/install.md states no minimum (${docs.source})`).toBeDefined();
    const why = `the CRDs need ${formatVersion(needs)} for ${by.join(", ")}`;
    expect(compareVersions(bound as KubeVersion, needs), why).toBeGreaterThanOrEqual(0);
    expect(compareVersions(parseKubeVersion(documented ?? ""), needs), why).toBeGreaterThanOrEqual(0);
    expect(formatVersion(parseKubeVersion(documented ?? ""))).toBe(formatVersion(bound as KubeVersion));
  });
});

describe("the CEL scan", () => {
  it("finds the functions a rule calls, not words in its strings", () => {
    expect(
      functionsOf(
        "self.matches('^a(b)$') && isIP(self.substring(1, self.lastIndexOf(']'))) && \"x.y(\" != format.dns1123Label().validate(self)",
      ).sort(),
    ).toEqual(["format.named", "isIP", "lastIndexOf", "matches", "substring", "validate"]);
    expect(functionsOf("self.?a.orValue(1) == 1")).toEqual(["orValue", "optional.of"]);
  });

  it("needs the IP library's version for isIP", () => {
    expect(formatVersion(requirement([{ rule: "isIP(self)" }]).needs)).toBe("1.31");
    expect(requirement([{ rule: "'%s'.format([self]) == ''", messageExpression: "'x'" }]).unknown).toEqual([
      "field messageExpression",
      "format",
    ]);
  });
});
