// A ControlPlane with a managed RabbitMQ on the fake port, as the order passes need it: the ControlPlane
// assigning `tenant`, its RabbitmqCluster "rabbitmq" (all replicas ready) and the cluster's default-user
// Secret (admin / admin-pw at rabbitmq.<namespace>.svc:5672).
import { controlPlaneKind, rabbitmqClusterKind, secretKind } from "../../src/api/index.ts";
import type { FakeKube } from "./fake-kube.ts";

const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");

export function putManagedBus(kube: FakeKube, namespace: string, tenant: string): void {
  kube.put(controlPlaneKind, {
    metadata: { name: "cp", namespace },
    spec: {
      namespaceAssignments: [{ namespace: tenant }],
      infrastructure: { messaging: { clusterRef: { name: "rabbitmq" } } },
    },
  });
  kube.put(rabbitmqClusterKind, {
    metadata: { name: "rabbitmq", namespace },
    spec: { replicas: 1 },
    status: {
      defaultUser: { secretReference: { name: "rabbitmq-default-user" } },
      conditions: [{ type: "AllReplicasReady", status: "True" }],
    },
  });
  kube.put(secretKind, {
    metadata: { name: "rabbitmq-default-user", namespace },
    data: {
      username: b64("admin"),
      password: b64("admin-pw"),
      host: b64(`rabbitmq.${namespace}.svc`),
      port: b64("5672"),
    },
  });
}
