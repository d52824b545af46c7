// The in-memory Kubernetes port held to the port's contract (harness/fakes/kube-port-contract.ts), the
// same suite test/runtime/kube-port.itest.ts runs on the real API server.
import { beforeEach } from "vitest";
import { FakeKube } from "../../harness/fakes/fake-kube.ts";
import {
  describeKubePort,
  unservedKind,
  widgets,
  type PortUnderTest,
} from "../../harness/fakes/kube-port-contract.ts";

let port: PortUnderTest;

beforeEach(() => {
  const kube = new FakeKube();
  kube.notServed(unservedKind);
  const namespace = "contract";
  port = { kube, namespace, stored: async (name) => kube.read(widgets, namespace, name) };
});

describeKubePort("in memory", () => port);
