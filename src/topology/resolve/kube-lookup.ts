// BrokerLookup on the Kubernetes API: direct reads (no cache), because the objects a reference points
// at are few and read only when a topology resource is reconciled.
import * as k8s from "@kubernetes/client-node";
import { RabbitmqClusterSchema, rabbitmqClusterKind } from "../../api/index.ts";
import type { BrokerLookup, LookedUpCluster, LookedUpSecret, LookedUpService } from "./resolve-broker.ts";

async function orUndefined<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof k8s.ApiException && error.code === 404) return undefined;
    throw error;
  }
}

export function kubeBrokerLookup(config: k8s.KubeConfig): BrokerLookup {
  const core = config.makeApiClient(k8s.CoreV1Api);
  const custom = config.makeApiClient(k8s.CustomObjectsApi);
  return {
    async cluster(namespace, name): Promise<LookedUpCluster | undefined> {
      const raw = await orUndefined(() =>
        custom.getNamespacedCustomObject({
          group: rabbitmqClusterKind.group,
          version: rabbitmqClusterKind.version,
          plural: rabbitmqClusterKind.plural,
          namespace,
          name,
        }),
      );
      return raw === undefined ? undefined : RabbitmqClusterSchema.parse(raw);
    },
    async secret(namespace, name): Promise<LookedUpSecret | undefined> {
      const secret = await orUndefined(() => core.readNamespacedSecret({ namespace, name }));
      if (!secret) return undefined;
      const values = Object.fromEntries(
        Object.entries(secret.data ?? {}).map(([key, value]) => [
          key,
          Buffer.from(value, "base64").toString("utf8"),
        ]),
      );
      return {
        metadata: { labels: secret.metadata?.labels, annotations: secret.metadata?.annotations },
        values,
      };
    },
    async service(namespace, name): Promise<LookedUpService | undefined> {
      const service = await orUndefined(() => core.readNamespacedService({ namespace, name }));
      if (!service) return undefined;
      return {
        metadata: { labels: service.metadata?.labels, annotations: service.metadata?.annotations },
        ports: (service.spec?.ports ?? []).map((p) => ({ name: p.name, port: p.port })),
      };
    },
  };
}
