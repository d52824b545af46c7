// The port on the real management cluster held to the port's contract
// (harness/fakes/kube-port-contract.ts), the same suite test/runtime/kube-port.test.ts runs in memory.
import { afterAll, beforeAll, beforeEach } from "vitest";
import { RestKube } from "../../src/runtime/port/rest-kube.ts";
import { KubeRest } from "../../src/runtime/port/kube-rest.ts";
import { describeKubePort, widgets, type PortUnderTest } from "../../harness/fakes/kube-port-contract.ts";
import { freshNamespace, installCrd, testCluster } from "../../harness/world/kube.ts";

const cluster = testCluster("management");
const kube = new RestKube(new KubeRest(cluster.kubeconfig));
const namespaces: string[] = [];
let port: PortUnderTest;

beforeAll(async () => {
  await installCrd(cluster, {
    metadata: { name: `${widgets.plural}.${widgets.group}` },
    spec: {
      group: widgets.group,
      names: { plural: widgets.plural, singular: "widget", kind: widgets.kind, listKind: "WidgetList" },
      scope: "Namespaced",
      versions: [
        {
          name: widgets.version,
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: {
              type: "object",
              properties: {
                spec: { type: "object", properties: { size: { type: "integer" } } },
                status: {
                  type: "object",
                  properties: { phase: { type: "string" }, note: { type: "string" } },
                },
              },
            },
          },
        },
      ],
    },
  });
});

beforeEach(async () => {
  const namespace = await freshNamespace(cluster, "port");
  namespaces.push(namespace);
  port = {
    kube,
    namespace,
    stored: (name) => kube.get(widgets, { namespace, name }, { live: true }),
  };
});

afterAll(async () => {
  await Promise.all(namespaces.map((name) => cluster.core.deleteNamespace({ name }).catch(() => undefined)));
});

describeKubePort("on the API server", () => port);
