// Faults an operator meets in production, injected into one order: its status lost (an etcd or backup
// restore without status, a CRD migration) and its delivery stalled by an admission policy that refuses
// every update of its delivered Secret, as a policy engine or a broken webhook would.
import * as k8s from "@kubernetes/client-node";
import { eventually, type TestCluster } from "../world/kube.ts";

const merge = k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch);

/** Removes the order's whole status through the status subresource. */
export async function wipeStatus(
  cluster: TestCluster,
  order: { plural: string; namespace: string; name: string },
): Promise<void> {
  const custom = cluster.config.makeApiClient(k8s.CustomObjectsApi);
  await custom.patchNamespacedCustomObjectStatus(
    { group: "c5c3.io", version: "v1alpha1", ...order, body: { status: null } },
    merge,
  );
}

export interface DeliveryStall {
  /** Removes the policy: updates of the Secret are admitted again. */
  release(): Promise<void>;
}

/**
 * A ValidatingAdmissionPolicy and its binding that refuse every update of Secret `namespace/name`;
 * resolves once the API server enforces it (a dry-run update is refused).
 */
export async function stallDelivery(
  cluster: TestCluster,
  namespace: string,
  name: string,
): Promise<DeliveryStall> {
  const admission = cluster.config.makeApiClient(k8s.AdmissionregistrationV1Api);
  const policy = `vb-stall-${namespace}-${name}`.slice(0, 253);
  const release = async () => {
    await admission.deleteValidatingAdmissionPolicyBinding({ name: policy }).catch(() => undefined);
    await admission.deleteValidatingAdmissionPolicy({ name: policy }).catch(() => undefined);
  };
  await admission.createValidatingAdmissionPolicy({
    body: {
      metadata: { name: policy },
      spec: {
        failurePolicy: "Fail",
        matchConstraints: {
          resourceRules: [
            { apiGroups: [""], apiVersions: ["v1"], operations: ["UPDATE"], resources: ["secrets"] },
          ],
        },
        validations: [
          {
            expression: `object.metadata.namespace != '${namespace}' || object.metadata.name != '${name}'`,
            message: "updates of this Secret are refused by a test's policy",
          },
        ],
      },
    },
  });
  try {
    await admission.createValidatingAdmissionPolicyBinding({
      body: { metadata: { name: policy }, spec: { policyName: policy, validationActions: ["Deny"] } },
    });
    await eventually("the policy to refuse an update", async () => {
      try {
        await cluster.core.patchNamespacedSecret(
          { namespace, name, body: { metadata: { labels: { "vb-stall-probe": "x" } } }, dryRun: "All" },
          merge,
        );
        return undefined;
      } catch (error) {
        return error instanceof k8s.ApiException && error.code === 422 ? true : undefined;
      }
    });
  } catch (error) {
    await release();
    throw error;
  }
  return { release };
}
