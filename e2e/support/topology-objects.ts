// The clean-up of an e2e file's rabbitmq.com objects: deleted while the operator still runs, so that it
// takes their finalizers off, and waited for (the Vhosts go last) before the file stops the operator.
import * as k8s from "@kubernetes/client-node";
import { eventually, type TestCluster } from "../../harness/world/kube.ts";

export async function removeTopologyObjects(
  cluster: TestCluster,
  namespace: string,
  plurals: readonly string[],
  timeoutMs: number,
): Promise<void> {
  const custom = cluster.config.makeApiClient(k8s.CustomObjectsApi);
  const api = { group: "rabbitmq.com", version: "v1beta1", namespace };
  for (const plural of plurals) {
    await custom.deleteCollectionNamespacedCustomObject({ ...api, plural }).catch(() => undefined);
  }
  await eventually(
    "the topology objects to be gone",
    async () => {
      const left = (await custom.listNamespacedCustomObject({ ...api, plural: "vhosts" })) as {
        items: unknown[];
      };
      return left.items.length === 0 || undefined;
    },
    timeoutMs,
  ).catch(() => undefined);
}
