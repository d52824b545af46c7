// BrokerLookup on the Kubernetes port: a RabbitmqCluster, Secret or Service a reference points at,
// from a cache where one holds it and from the API server otherwise.
import { RabbitmqClusterSchema, rabbitmqClusterKind, secretKind } from "../../api/index.ts";
import type { Kind, KubeObject } from "../../runtime/kube-rest.ts";
import { isNotServed, type Kube } from "../../runtime/kube.ts";
import type { BrokerLookup, LookedUpCluster, LookedUpSecret, LookedUpService } from "./resolve-broker.ts";

const serviceKind: Kind = { group: "", version: "v1", plural: "services", kind: "Service", namespaced: true };

/** A Secret's data, decoded. */
export function secretValues(secret: KubeObject): Record<string, string> {
  const data = (secret["data"] ?? {}) as Record<string, string>;
  return Object.fromEntries(
    Object.entries(data).map(([key, value]) => [key, Buffer.from(value, "base64").toString("utf8")]),
  );
}

interface ServiceSpec {
  ports?: { name?: string; port: number }[];
}

export function kubeBrokerLookup(kube: Kube): BrokerLookup {
  return {
    async cluster(namespace, name): Promise<LookedUpCluster | undefined> {
      // Where the RabbitmqCluster kind is not served, no cluster exists: the reference is gone.
      const raw = await kube.get(rabbitmqClusterKind, { namespace, name }).catch((error: unknown) => {
        if (isNotServed(error)) return undefined;
        throw error;
      });
      if (raw === undefined) return undefined;
      const cluster = RabbitmqClusterSchema.parse(raw);
      const additionalConfig = (cluster.spec?.["rabbitmq"] as { additionalConfig?: unknown } | undefined)
        ?.additionalConfig;
      return {
        ...cluster,
        spec: {
          replicas: cluster.spec?.replicas,
          rabbitmq: { additionalConfig: typeof additionalConfig === "string" ? additionalConfig : undefined },
        },
      };
    },
    async secret(namespace, name): Promise<LookedUpSecret | undefined> {
      const secret = await kube.get(secretKind, { namespace, name });
      if (!secret) return undefined;
      const { labels, annotations } = secret.metadata ?? {};
      return { metadata: { labels, annotations }, values: secretValues(secret) };
    },
    async service(namespace, name): Promise<LookedUpService | undefined> {
      const service = await kube.get(serviceKind, { namespace, name });
      if (!service) return undefined;
      const { labels, annotations } = service.metadata ?? {};
      const ports = ((service["spec"] ?? {}) as ServiceSpec).ports ?? [];
      return { metadata: { labels, annotations }, ports: ports.map((p) => ({ name: p.name, port: p.port })) };
    },
  };
}
