// Helm 3 runs a post-renderer on a release's manifest only, not on its hooks (pkg/action/action.go,
// renderResources), and `helm test` creates a test hook as the release stored it. For the local
// environment's nodes the stored test Pods are given what node-post-renderer.ts gives the Deployments,
// in the release's Secret (JSON, gzipped, base64) of its deployed revision.
import { gunzipSync, gzipSync } from "node:zlib";
import * as k8s from "@kubernetes/client-node";
import * as yaml from "yaml";
import { adaptPodSpec } from "./node-post-renderer.ts";

/** Adapts the deployed revision's test Pods of `release` in `namespace`; how many it adapted. */
export async function adaptStoredTestPods(
  core: k8s.CoreV1Api,
  namespace: string,
  release: string,
): Promise<number> {
  const [secret] = (
    await core.listNamespacedSecret({
      namespace,
      labelSelector: `owner=helm,name=${release},status=deployed`,
    })
  ).items;
  if (!secret?.metadata?.name) throw new Error(`no deployed revision of release ${namespace}/${release}`);
  const stored = Buffer.from(secret.data?.["release"] ?? "", "base64").toString("utf8");
  const record = JSON.parse(gunzipSync(Buffer.from(stored, "base64")).toString("utf8")) as {
    hooks: { kind: string; manifest: string }[];
  };
  const pods = record.hooks.filter((h) => h.kind === "Pod");
  for (const hook of pods) {
    const pod = yaml.parse(hook.manifest) as { spec: Parameters<typeof adaptPodSpec>[0] };
    adaptPodSpec(pod.spec);
    hook.manifest = yaml.stringify(pod);
  }
  const encoded = gzipSync(JSON.stringify(record)).toString("base64");
  await core.patchNamespacedSecret(
    {
      namespace,
      name: secret.metadata.name,
      body: { data: { release: Buffer.from(encoded).toString("base64") } },
    },
    k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
  );
  return pods.length;
}
