// The Argo CD health check as docs/gitops.md hands it out: the argocd-cm snippet carries the chart's
// file (deploy/vhost-broker/files/argocd-health.lua, the one the integration tests run) verbatim, under
// the key of each order kind, and the chart's notes point at it. docs/tenants.md explains every reason.
import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import * as yaml from "yaml";
import { GATEKEEPER_REJECTED } from "../../src/gatekeeper/gatekeeper.ts";
import { orderKindRefs } from "../../src/operator/order-kinds.ts";
import { DELETING } from "../../src/orders/core/conditions.ts";
import { Reason as MariaDBReason } from "../../src/orders/mariadb/conditions.ts";
import { Reason as RabbitMQReason } from "../../src/orders/rabbitmq/conditions.ts";

const file = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");

it("docs/gitops.md's argocd-cm snippet carries the chart's health check for every order kind", () => {
  const script = file("deploy/vhost-broker/files/argocd-health.lua");
  const blocks = [...file("docs/gitops.md").matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1] ?? "");
  const configMaps = blocks
    .map(
      (b) => yaml.parse(b) as { kind?: string; metadata?: { name?: string }; data?: Record<string, string> },
    )
    .filter((o) => o?.kind === "ConfigMap" && o.metadata?.name === "argocd-cm");
  expect(configMaps).toHaveLength(1);
  const data = configMaps[0]?.data ?? {};
  const keys = orderKindRefs.map((k) => `resource.customizations.health.${k.group}_${k.kind}`);
  expect(keys.sort()).toEqual([
    "resource.customizations.health.c5c3.io_MariaDBDatabase",
    "resource.customizations.health.c5c3.io_RabbitMQVhost",
  ]);
  expect(Object.keys(data).sort()).toEqual(keys);
  for (const key of keys) expect(data[key], key).toBe(script);
});

it("the chart's notes name the health check", () => {
  expect(file("deploy/vhost-broker/templates/NOTES.txt")).toContain("docs/gitops.md");
});

it("docs/tenants.md says what every reason of both order kinds means", () => {
  const page = file("docs/tenants.md");
  const table = page.slice(page.indexOf("## What the conditions say"));
  const reasons = new Set([
    ...Object.values(RabbitMQReason),
    ...Object.values(MariaDBReason),
    GATEKEEPER_REJECTED,
    DELETING,
  ]);
  // NotAllReady is the aggregate's, explained in the text above the table.
  reasons.delete("NotAllReady");
  for (const reason of reasons) expect(table, reason).toContain(`\`${reason}\``);
  expect(page).toContain("```mermaid\nsequenceDiagram");
});
