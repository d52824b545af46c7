// BrokerLookup on the Kubernetes port: a RabbitmqCluster, Secret or Service a reference points at,
// from a cache where one holds it and from the API server otherwise. The kinds are named here, and
// only the fields the resolver reads are checked: this component knows the runtime, not the API types.
import { z } from "zod";
import type { Kind, KubeObject } from "../runtime/port/kube-rest.ts";
import { isNotServed, type Kube } from "../runtime/port/kube.ts";
import type { BrokerLookup, LookedUpCluster, LookedUpSecret, LookedUpService } from "./resolve-broker.ts";

const serviceKind: Kind = { group: "", version: "v1", plural: "services", kind: "Service", namespaced: true };
const secretKind: Kind = { group: "", version: "v1", plural: "secrets", kind: "Secret", namespaced: true };
export const rabbitmqClusterKind: Kind = {
  group: "rabbitmq.com",
  version: "v1beta1",
  plural: "rabbitmqclusters",
  kind: "RabbitmqCluster",
  namespaced: true,
};

const name = z.string().optional();
const ClusterSchema = z.object({
  metadata: z.object({
    annotations: z.record(z.string(), z.string()).optional(),
    labels: z.record(z.string(), z.string()).optional(),
  }),
  spec: z
    .object({
      replicas: z.number().optional(),
      rabbitmq: z.object({ additionalConfig: z.unknown() }).partial().optional(),
    })
    .optional(),
  status: z
    .object({
      binding: z.object({ name }).optional(),
      defaultUser: z.object({ serviceReference: z.object({ name, namespace: name }).optional() }).optional(),
    })
    .optional(),
});

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
      const cluster = ClusterSchema.parse(raw);
      const additionalConfig = cluster.spec?.rabbitmq?.additionalConfig;
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
