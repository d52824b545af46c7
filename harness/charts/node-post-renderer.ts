// A helm post-renderer for the local environment's nodes (scripts/localenv/node.sh): it gives a chart's
// Deployments what a cluster gives their pods and these nodes do not, and changes nothing else.
//
//   - The host's network (hostNetwork, dnsPolicy ClusterFirstWithHostNet): the environment's servers
//     (the API server, RabbitMQ, OpenBao) listen on loopback, which no pod network reaches.
//   - The probe and metrics servers bound to the pod's IP instead of every address: each node has an
//     address of its own, so that the replicas of different nodes, which share the host's network here,
//     do not take each other's port (on a real node a hostNetwork pod binds the node's address too).
//   - The service-account token, CA and namespace at /var/run/secrets/kubernetes.io/serviceaccount, as
//     the ServiceAccount admission plugin mounts them: the environment's API servers run without it (as
//     envtest's do), so nothing else would give the pod its in-cluster credentials.
//
// Run as a program (helm --post-renderer), it reads the manifest on stdin and writes it on stdout.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import * as yaml from "yaml";

/** The variable the bind addresses refer to, set from the pod's status.podIP. */
export const POD_IP_VARIABLE = "LOCALENV_POD_IP";

/** The addresses bound to the pod's IP (the chart binds `:port`). */
const BIND_ADDRESSES = ["VHOST_BROKER_HEALTH_PROBE_BIND_ADDRESS", "VHOST_BROKER_METRICS_BIND_ADDRESS"];

const TOKEN_PATH = "/var/run/secrets/kubernetes.io/serviceaccount";
const TOKEN_VOLUME = "kube-api-access";

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: unknown;
}

interface Container {
  name: string;
  env?: EnvVar[];
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
}

interface PodSpec {
  hostNetwork?: boolean;
  dnsPolicy?: string;
  containers: Container[];
  initContainers?: Container[];
  volumes?: { name: string; [key: string]: unknown }[];
}

/** The projected volume the ServiceAccount admission plugin adds (its expiry and its three sources). */
const tokenVolume = {
  name: TOKEN_VOLUME,
  projected: {
    defaultMode: 0o644,
    sources: [
      { serviceAccountToken: { path: "token", expirationSeconds: 3607 } },
      { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
      {
        downwardAPI: {
          items: [{ path: "namespace", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } }],
        },
      },
    ],
  },
};

function adaptContainer(container: Container): void {
  const env = container.env ?? [];
  if (env.some((e) => BIND_ADDRESSES.includes(e.name))) {
    for (const e of env) {
      if (BIND_ADDRESSES.includes(e.name) && e.value?.startsWith(":")) {
        e.value = `$(${POD_IP_VARIABLE})${e.value}`;
      }
    }
    // $(VAR) refers only to variables defined before it.
    if (!env.some((e) => e.name === POD_IP_VARIABLE)) {
      env.unshift({ name: POD_IP_VARIABLE, valueFrom: { fieldRef: { fieldPath: "status.podIP" } } });
    }
    container.env = env;
  }
  const mounts = container.volumeMounts ?? [];
  if (!mounts.some((m) => m.mountPath === TOKEN_PATH)) {
    mounts.push({ name: TOKEN_VOLUME, mountPath: TOKEN_PATH, readOnly: true });
  }
  container.volumeMounts = mounts;
}

/** The pod spec adapted in place. */
export function adaptPodSpec(spec: PodSpec): void {
  spec.hostNetwork = true;
  spec.dnsPolicy = "ClusterFirstWithHostNet";
  for (const container of [...spec.containers, ...(spec.initContainers ?? [])]) adaptContainer(container);
  const volumes = spec.volumes ?? [];
  if (!volumes.some((v) => v.name === TOKEN_VOLUME)) volumes.push(structuredClone(tokenVolume));
  spec.volumes = volumes;
}

/** The manifest with every Deployment's pod template adapted; the other documents as they were. */
export function adaptManifest(manifest: string): string {
  const documents = yaml.parseAllDocuments(manifest);
  const out: string[] = [];
  for (const document of documents) {
    const object = document.toJS() as { kind?: string; spec?: { template?: { spec?: PodSpec } } } | null;
    const spec = object?.kind === "Deployment" ? object.spec?.template?.spec : undefined;
    if (spec) {
      adaptPodSpec(spec);
      out.push(yaml.stringify(object));
    } else if (object !== null) {
      // Its own `---` marker, if it has one, goes: every document gets one below.
      out.push(document.toString().replace(/^---\n/, ""));
    }
  }
  return out.map((d) => `---\n${d}`).join("");
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.stdout.write(adaptManifest(readFileSync(0, "utf8")));
}
