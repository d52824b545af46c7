// deploy/vhost-broker/Chart.yaml as a chart repository and Artifact Hub read it: where the project lives,
// and annotations that say what the package holds, each kept to the file it restates: the license to
// package.json's, the changes to CHANGELOG.md's section of the chart's version, the image to the
// chart's default one, the CRDs to files/crds.
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import * as yaml from "yaml";

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");

interface Chart {
  version: string;
  appVersion: string;
  home?: string;
  sources?: string[];
  maintainers?: { name: string; email?: string; url?: string }[];
  annotations?: Record<string, string>;
}
const chart = yaml.parse(read("deploy/vhost-broker/Chart.yaml")) as Chart;
const annotation = <T>(key: string): T => {
  const text = chart.annotations?.[`artifacthub.io/${key}`];
  if (text === undefined) throw new Error(`Chart.yaml has no artifacthub.io/${key}`);
  return yaml.parse(text) as T;
};

interface Crd {
  metadata: { name: string };
  spec: { names: { kind: string }; versions: { name: string; served: boolean; storage: boolean }[] };
}
const crdDir = "deploy/vhost-broker/files/crds";
const crds = readdirSync(new URL(`../../${crdDir}`, import.meta.url))
  .filter((f) => f.endsWith(".yaml"))
  .map((f) => yaml.parse(read(`${crdDir}/${f}`)) as Crd);

/** The entries of one version's section of CHANGELOG.md, by kind (Added → added), one line each. */
function changelogEntries(version: string): { kind: string; description: string }[] {
  const page = read("CHANGELOG.md");
  const start = page.indexOf(`## [${version}]`);
  if (start < 0) return [];
  const rest = page.slice(start + 1);
  const section = rest.slice(0, rest.search(/\n## \[/) < 0 ? undefined : rest.search(/\n## \[/));
  const entries: { kind: string; description: string }[] = [];
  let kind = "";
  for (const block of section.split(/\n(?=### |- )/)) {
    const heading = /^### (\w+)/.exec(block);
    if (heading) kind = (heading[1] ?? "").toLowerCase();
    else if (block.startsWith("- "))
      entries.push({ kind, description: block.slice(2).replace(/\s+/g, " ").trim() });
  }
  return entries;
}

describe("Chart.yaml", () => {
  it("says where the project lives and who maintains it", () => {
    expect(chart.home).toMatch(/^https:\/\//);
    expect(chart.sources?.length).toBeGreaterThan(0);
    for (const source of chart.sources ?? []) expect(source).toMatch(/^https:\/\//);
    expect(chart.maintainers?.length).toBeGreaterThan(0);
    for (const maintainer of chart.maintainers ?? []) expect(maintainer.name).not.toBe("");
  });

  it("carries package.json's license", () => {
    const pkg = JSON.parse(read("package.json")) as { license: string };
    expect(chart.annotations?.["artifacthub.io/license"]).toBe(pkg.license);
  });

  it("lists the changes of CHANGELOG.md's section of the chart's version", () => {
    const entries = changelogEntries(chart.version);
    expect(entries.length).toBeGreaterThan(0);
    expect(annotation("changes")).toEqual(entries);
  });

  it("names the image the chart runs by default", () => {
    const values = yaml.parse(read("deploy/vhost-broker/values.yaml")) as {
      image: { registry: string; repository: string; tag: string };
    };
    const repository = [values.image.registry, values.image.repository].filter(Boolean).join("/");
    expect(annotation("images")).toEqual([
      { name: "vhost-broker", image: `${repository}:${values.image.tag || chart.appVersion}` },
    ]);
  });

  it("describes every CRD the chart can install, at its served version", () => {
    const listed =
      annotation<{ kind: string; version: string; name: string; displayName: string; description: string }[]>(
        "crds",
      );
    const expected = crds.map((c) => ({
      kind: c.spec.names.kind,
      version: c.spec.versions.find((v) => v.storage)?.name,
      name: c.metadata.name,
    }));
    expect(listed.map(({ kind, version, name }) => ({ kind, version, name }))).toEqual(
      expect.arrayContaining(expected),
    );
    expect(listed).toHaveLength(expected.length);
    for (const crd of listed) expect(crd.description, crd.name).not.toBe("");
  });

  it("is a prerelease while the order API is not v1", () => {
    const orderVersions = crds
      .filter((c) => c.metadata.name.endsWith(".c5c3.io"))
      .flatMap((c) => c.spec.versions.filter((v) => v.served).map((v) => v.name));
    const prerelease = orderVersions.some((v) => /alpha|beta/.test(v)) || chart.version.includes("-");
    expect(chart.annotations?.["artifacthub.io/prerelease"]).toBe(String(prerelease));
  });

  it("points its links at pages that exist in the repository", () => {
    const links = annotation<{ name: string; url: string }[]>("links");
    expect(links.length).toBeGreaterThan(0);
    for (const link of links) {
      const path = /\/blob\/main\/(.+)$/.exec(link.url)?.[1];
      expect(path, link.url).toBeDefined();
      expect(() => read(path ?? ""), link.url).not.toThrow();
    }
  });
});
