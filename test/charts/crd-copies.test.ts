// Helm reads a chart's files only from the chart's own folder, so the charts carry copies of the CRDs in
// crds/. This check keeps every copy identical to its source.
import { readdirSync, readFileSync } from "node:fs";
import { expect, it } from "vitest";

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");
const operatorCopies = "deploy/vhost-broker/files/crds";

it("ships the order CRDs in deploy/target-cluster-access unchanged", () => {
  for (const file of ["c5c3.io_rabbitmqvhosts.yaml", "c5c3.io_mariadbdatabases.yaml"])
    expect(read(`deploy/target-cluster-access/crds/${file}`)).toBe(read(`crds/${file}`));
});

it("ships every CRD of crds/ (but the local environment's) in deploy/vhost-broker unchanged", () => {
  const sources = readdirSync(new URL("../../crds", import.meta.url)).filter((f) => f.endsWith(".yaml"));
  const copies = readdirSync(new URL(`../../${operatorCopies}`, import.meta.url));
  expect(copies.sort()).toEqual(sources.sort());
  for (const file of sources) expect(read(`${operatorCopies}/${file}`)).toBe(read(`crds/${file}`));
});
