// Every example on the reference pages (docs/api/examples/) applies unchanged with kubectl: the seed's
// RabbitMQVhost example on both clusters, with its placeholders substituted as the seed's suite does.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { examplesOf } from "../../scripts/gen-api.ts";
import {
  controlPlaneKind,
  rabbitMQVhostKind,
  rabbitmqClusterKind,
  sqlKinds,
  topologyKinds,
  type KindRef,
} from "../../src/api/index.ts";
import { freshNamespace, testCluster, type TestCluster } from "../../harness/world/kube.ts";
import { installKind, kubectl, read } from "../../harness/world/admission.ts";

const managementKinds: KindRef[] = [
  rabbitMQVhostKind,
  controlPlaneKind,
  ...topologyKinds,
  ...sqlKinds,
  rabbitmqClusterKind,
];

async function applyExamples(cluster: TestCluster, kinds: KindRef[], tenantNs: string, cpNs: string) {
  for (const k of kinds) {
    const examples = examplesOf(k);
    expect(examples.length, k.kind).toBeGreaterThan(0);
    for (const example of examples) {
      const text = example.text.replaceAll("@TENANT_NS@", tenantNs).replaceAll("@CP_NS@", cpNs);
      const out = await kubectl(cluster, ["apply", "-n", tenantNs, "-f", "-"], text);
      expect(out, example.file).toMatch(/ created\n?$/);
      const name = (parse(text) as { metadata: { name: string } }).metadata.name;
      expect((await read(cluster, k, tenantNs, name)).spec, example.file).toBeDefined();
    }
  }
}

describe.each([
  ["management", managementKinds],
  ["target", [rabbitMQVhostKind]],
] as const)("the documented examples on the %s cluster", (clusterName, kinds) => {
  const cluster = testCluster(clusterName);
  let ns = "";

  beforeAll(async () => {
    for (const k of kinds) await installKind(cluster, k);
    ns = await freshNamespace(cluster, "examples");
  });

  afterAll(async () => {
    await cluster.core.deleteNamespace({ name: ns }).catch(() => undefined);
  });

  it("apply unchanged", async () => {
    await applyExamples(cluster, [...kinds], ns, "openstack");
  });

  it("store the seed's example with its schedule and the defaults", async () => {
    expect((await read(cluster, rabbitMQVhostKind, ns, "workflow")).spec).toEqual({
      controlPlaneRef: { name: "cp", namespace: "openstack" },
      passwordGeneration: 1,
      rotation: { interval: "3m", gracePeriod: "1m" },
      deletionPolicy: "Retain",
    });
  });
});
