// The CRDs in crds/ are the one source of truth: the committed zod schemas, types and reference pages
// must be exactly what scripts/gen-api.ts makes of them, so the two sides cannot drift.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  docsDirectory,
  examplesOf,
  fieldRows,
  generatedPath,
  pageName,
  renderGenerated,
  renderPages,
} from "../../scripts/gen-api.ts";
import { localEnvCrds, shippedCrds } from "./crds.ts";
import { mariaDBKind, rabbitmqClusterKind, shippedKinds } from "./index.ts";

describe("generated API", () => {
  it("src/api/generated.ts is what the generator makes of the CRDs", async () => {
    expect(readFileSync(generatedPath, "utf8")).toBe(await renderGenerated());
  });

  it("docs/api holds exactly the generated reference pages", async () => {
    const pages = await renderPages();
    const committed = readdirSync(docsDirectory).filter((f) => f.endsWith(".md"));
    expect(committed.sort()).toEqual([...pages.keys()].sort());
    for (const [file, text] of pages)
      expect(readFileSync(join(docsDirectory, file), "utf8"), file).toBe(text);
  });

  it("every spec and status field of every CRD appears on its kind's page", () => {
    for (const crd of [...shippedCrds(), ...localEnvCrds()]) {
      const ref = {
        kind: crd.spec.names.kind,
        apiVersion: `${crd.spec.group}/${crd.spec.versions[0]?.name}`,
      };
      const page = readFileSync(join(docsDirectory, pageName(ref)), "utf8");
      const schema = crd.spec.versions[0]?.schema?.openAPIV3Schema;
      expect(schema, crd.metadata?.name).toBeDefined();
      for (const part of ["spec", "status"]) {
        const sub = schema?.properties?.[part];
        if (!sub) continue;
        for (const row of fieldRows(sub, part).slice(1))
          expect(page, crd.spec.names.kind).toContain(`\`${row.path}\``);
      }
      for (const column of crd.spec.versions[0]?.additionalPrinterColumns ?? []) {
        expect(page).toContain(`| ${column.name} `);
      }
    }
  });

  it("the kind constants name the CRDs that are shipped", () => {
    const served = (crds: typeof shippedCrds extends () => infer T ? T : never) =>
      crds.map((c) => ({
        group: c.spec.group,
        version: c.spec.versions[0]?.name,
        kind: c.spec.names.kind,
        plural: c.spec.names.plural,
        apiVersion: `${c.spec.group}/${c.spec.versions[0]?.name}`,
        namespaced: c.spec.scope === "Namespaced",
      }));
    const byKind = (a: { kind: string; apiVersion: string }, b: { kind: string; apiVersion: string }) =>
      a.kind.localeCompare(b.kind) || a.apiVersion.localeCompare(b.apiVersion);
    expect(served(shippedCrds()).sort(byKind)).toEqual([...shippedKinds].sort(byKind));
    expect(served(localEnvCrds()).sort(byKind)).toEqual([mariaDBKind, rabbitmqClusterKind].sort(byKind));
  });

  it("every CRD carries its status subresource, and every shipped one a Ready and an Age column", () => {
    for (const crd of shippedCrds()) {
      const version = crd.spec.versions[0];
      expect(version?.subresources?.status, crd.metadata?.name).toEqual({});
      const columns = (version?.additionalPrinterColumns ?? []).map((c) => c.name);
      expect(columns, crd.metadata?.name).toContain("Age");
      if (crd.spec.names.kind !== "ControlPlane") expect(columns, crd.metadata?.name).toContain("Ready");
    }
  });

  it("has an example for every kind", () => {
    for (const crd of [...shippedCrds(), ...localEnvCrds()]) {
      const ref = {
        kind: crd.spec.names.kind,
        apiVersion: `${crd.spec.group}/${crd.spec.versions[0]?.name}`,
      };
      expect(examplesOf(ref).length, crd.metadata?.name).toBeGreaterThan(0);
    }
  });
});
