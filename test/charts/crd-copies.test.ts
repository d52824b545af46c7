// Helm installs a chart's CRDs from the chart's own crds/ folder, so the target-cluster chart carries a
// copy of the order CRD. This check keeps the copy identical to the source in crds/.
import { readFileSync } from "node:fs";
import { expect, it } from "vitest";

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");

it("ships the order CRD in deploy/target-cluster-access unchanged", () => {
  expect(read("deploy/target-cluster-access/crds/c5c3.io_rabbitmqvhosts.yaml")).toBe(
    read("crds/c5c3.io_rabbitmqvhosts.yaml"),
  );
});
