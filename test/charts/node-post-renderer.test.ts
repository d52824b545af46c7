// The post-renderer of the node e2e (harness/charts/node-post-renderer.ts) changes a Deployment's pod only as
// it says (the host's network, the bind addresses on the pod's IP, the service-account token volume) and
// passes every other document through as it was.
import { describe, expect, it } from "vitest";
import * as yaml from "yaml";
import { adaptManifest, POD_IP_VARIABLE } from "../../harness/charts/node-post-renderer.ts";

const manifest = `---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: vb # a comment that stays
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: vb
spec:
  template:
    spec:
      containers:
        - name: vhost-broker
          env:
            - name: VHOST_BROKER_METRICS_BIND_ADDRESS
              value: ":8443"
            - name: VHOST_BROKER_HEALTH_PROBE_BIND_ADDRESS
              value: ":8081"
            - name: VHOST_BROKER_OPENBAO_ADDRESS
              value: "http://127.0.0.1:28200"
          volumeMounts:
            - { name: tmp, mountPath: /tmp }
      volumes:
        - name: tmp
          emptyDir: {}
`;

interface Pod {
  hostNetwork: boolean;
  dnsPolicy: string;
  containers: {
    env: { name: string; value?: string; valueFrom?: unknown }[];
    volumeMounts: { name: string; mountPath: string; readOnly?: boolean }[];
  }[];
  volumes: { name: string; projected?: { sources: Record<string, unknown>[] } }[];
}

const podOf = (text: string): Pod =>
  (
    yaml
      .parseAllDocuments(text)
      .map((d) => d.toJS() as { kind: string; spec?: { template: { spec: Pod } } })[1]?.spec as {
      template: { spec: Pod };
    }
  ).template.spec;

describe("the node post-renderer", () => {
  it("puts the pod on the host's network with its servers bound to the pod's IP", () => {
    const pod = podOf(adaptManifest(manifest));
    expect(pod.hostNetwork).toBe(true);
    expect(pod.dnsPolicy).toBe("ClusterFirstWithHostNet");
    const env = pod.containers[0]?.env ?? [];
    expect(env[0]).toEqual({ name: POD_IP_VARIABLE, valueFrom: { fieldRef: { fieldPath: "status.podIP" } } });
    expect(Object.fromEntries(env.slice(1).map((e) => [e.name, e.value]))).toEqual({
      VHOST_BROKER_METRICS_BIND_ADDRESS: `$(${POD_IP_VARIABLE}):8443`,
      VHOST_BROKER_HEALTH_PROBE_BIND_ADDRESS: `$(${POD_IP_VARIABLE}):8081`,
      VHOST_BROKER_OPENBAO_ADDRESS: "http://127.0.0.1:28200",
    });
  });

  it("mounts the token, CA and namespace as the ServiceAccount admission plugin does", () => {
    const pod = podOf(adaptManifest(manifest));
    expect(pod.containers[0]?.volumeMounts).toEqual([
      { name: "tmp", mountPath: "/tmp" },
      { name: "kube-api-access", mountPath: "/var/run/secrets/kubernetes.io/serviceaccount", readOnly: true },
    ]);
    const sources = pod.volumes.find((v) => v.name === "kube-api-access")?.projected?.sources ?? [];
    expect(sources.map((s) => Object.keys(s)[0])).toEqual([
      "serviceAccountToken",
      "configMap",
      "downwardAPI",
    ]);
  });

  it("is idempotent and leaves the other documents as they were", () => {
    const once = adaptManifest(manifest);
    expect(yaml.parseAllDocuments(once).map((d) => (d.toJS() as { kind: string }).kind)).toEqual([
      "ServiceAccount",
      "Deployment",
    ]);
    expect(
      podOf(adaptManifest(once)).containers[0]?.env.filter((e) => e.name === POD_IP_VARIABLE),
    ).toHaveLength(1);
    expect(podOf(adaptManifest(once)).volumes).toHaveLength(2);
    expect(once).toContain("name: vb # a comment that stays");
  });
});
