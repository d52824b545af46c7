// docs/install.md's commands on the local management cluster, as far as they can run here without a
// broker operator or OpenBao of the page's own: every manifest the page applies (RabbitmqCluster,
// ControlPlane, the orders, the reviewer's token Secret) and the chart as each of its helm install and
// upgrade commands renders it, admitted by the API server in a server-side dry run. The page's
// namespaces become fresh ones; the Prometheus Operator's kinds, which the local cluster does not
// serve, are only checked to be rendered. install-page.test.ts checks the rest of the page offline.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  dryRunManifest,
  manifestObjects,
  renderChart,
  type RenderedObject,
} from "../../harness/charts/helm.ts";
import { installKind } from "../../harness/world/admission.ts";
import { localEnv } from "../../harness/world/env.ts";
import { freshNamespace, testCluster } from "../../harness/world/kube.ts";
import {
  controlPlaneKind,
  mariaDBDatabaseKind,
  rabbitMQVhostKind,
  rabbitmqClusterKind,
} from "../../src/api/index.ts";
import { appliesManifest, helmRuns, installCommands } from "./install-page.ts";

const cluster = testCluster("management");
const commands = installCommands();
const pageNamespaces = ["vhost-broker-system", "openstack", "tenant-a", "c5c3-clusters"] as const;
const fresh = new Map<string, string>();

/** A manifest of the page with its namespaces replaced by this run's. */
const localised = (text: string) =>
  text.replace(
    /\b(namespace: )(vhost-broker-system|openstack|tenant-a|c5c3-clusters)\b/g,
    (_, key: string, ns: string) => `${key}${fresh.get(ns) ?? ns}`,
  );

/** Values of the page with its namespaces (rbac.secretNamespaces) replaced by this run's. */
const localisedValues = (values: Record<string, unknown>) =>
  JSON.parse(
    JSON.stringify(values).replace(
      /"(vhost-broker-system|openstack|tenant-a|c5c3-clusters)"/g,
      (_, ns: string) => JSON.stringify(fresh.get(ns) ?? ns),
    ),
  ) as Record<string, unknown>;

/**
 * A server-side dry run of `objects`, a kubectl apply per namespace: kubectl refuses an object whose
 * namespace differs from its -n, and the page's manifests span several. One without a namespace goes
 * to `fallback`.
 */
async function dryRun(objects: readonly RenderedObject[], fallback: string): Promise<string> {
  const { KUBECTL, KUBECONFIG } = localEnv();
  const byNamespace = Map.groupBy(objects, (o) => o.metadata.namespace ?? fallback);
  let stdout = "";
  for (const [namespace, group] of byNamespace) {
    const manifest = group.map((o) => JSON.stringify(o)).join("\n---\n");
    stdout += (await dryRunManifest(KUBECTL, KUBECONFIG, manifest, namespace)).stdout;
  }
  return stdout;
}

beforeAll(async () => {
  for (const kind of [controlPlaneKind, rabbitMQVhostKind, mariaDBDatabaseKind, rabbitmqClusterKind])
    await installKind(cluster, kind);
  for (const ns of pageNamespaces)
    fresh.set(ns, await freshNamespace(cluster, `install-${ns.split("-")[0]}`));
});

afterAll(async () => {
  for (const name of fresh.values()) await cluster.core.deleteNamespace({ name }).catch(() => undefined);
});

describe("docs/install.md on the local management cluster", () => {
  it("admits every manifest the page applies (server-side dry run)", async () => {
    const applied = commands.filter(appliesManifest);
    expect(applied.length).toBeGreaterThanOrEqual(5);
    for (const command of applied) {
      const manifest = localised(command.heredoc ?? "");
      const objects = manifestObjects(manifest);
      const stdout = await dryRun(objects, fresh.get("vhost-broker-system") as string);
      for (const object of objects)
        expect(stdout, `${command.page}: ${object.kind} ${object.metadata.name}`).toMatch(
          new RegExp(`/${object.metadata.name} serverside-applied \\(server dry run\\)`),
        );
    }
  });

  it("admits the chart as each helm install and upgrade renders it (server-side dry run)", async () => {
    const runs = helmRuns(commands);
    expect(runs.map((r) => r.helm.verb)).toContain("install");
    const release = fresh.get("vhost-broker-system") as string;
    for (const { command, helm, values } of runs) {
      const manifest = await renderChart("vhost-broker", {
        release: helm.release,
        namespace: release,
        values: localisedValues(values),
      });
      const objects = manifestObjects(manifest);
      const monitoring = objects.filter((o) => o.apiVersion.startsWith("monitoring.coreos.com/"));
      if (helm.valuesFiles.includes("monitoring.yaml"))
        expect(monitoring.map((o) => o.kind).sort(), command.line).toEqual([
          "PrometheusRule",
          "ServiceMonitor",
        ]);
      // The CRDs are admitted by the chart's own tests; here they would only race the other files'.
      const rest = objects.filter(
        (o) => !o.apiVersion.startsWith("monitoring.coreos.com/") && o.kind !== "CustomResourceDefinition",
      );
      const stdout = await dryRun(rest, release);
      expect(stdout, command.line).toContain(
        "deployment.apps/vhost-broker serverside-applied (server dry run)",
      );
      expect(stdout.match(/\(server dry run\)/g)?.length, command.line).toBe(rest.length);
    }
  });
});
