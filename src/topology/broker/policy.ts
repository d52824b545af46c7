// Policy: PUT /api/policies/{vhost}/{name} with pattern, apply-to, priority and definition.
import type { z } from "zod";
import type { DeleteOutcome, ManagementClient } from "../../rabbitmq/client.ts";
import { sameJson } from "./compare.ts";
import { apiPath } from "../../rabbitmq/paths.ts";
import { policySchema } from "./schemas.ts";
import { DEFAULT_VHOST, readBack, type PolicySpec, type ReadBack } from "./specs.ts";

export function policyBody(spec: PolicySpec): Record<string, unknown> {
  return {
    pattern: spec.pattern,
    "apply-to": spec.applyTo ?? "all",
    priority: spec.priority ?? 0,
    definition: spec.definition,
  };
}

function policyPath(spec: Pick<PolicySpec, "name" | "vhost">): string {
  return apiPath("policies", spec.vhost ?? DEFAULT_VHOST, spec.name);
}

export async function declarePolicy(client: ManagementClient, spec: PolicySpec): Promise<void> {
  await client.put(policyPath(spec), policyBody(spec));
}

export async function deletePolicy(
  client: ManagementClient,
  spec: Pick<PolicySpec, "name" | "vhost">,
): Promise<DeleteOutcome> {
  return client.delete(policyPath(spec));
}

export async function readBackPolicy(client: ManagementClient, spec: PolicySpec): Promise<ReadBack> {
  return comparePolicy(spec, await client.find(policyPath(spec), policySchema));
}

/** The policy as the broker holds it against the desired state; undefined = missing. */
export function comparePolicy(spec: PolicySpec, actual: z.infer<typeof policySchema> | undefined): ReadBack {
  if (!actual) return readBack(false, []);
  const desired = policyBody(spec);
  const differences: string[] = [];
  if (actual.pattern !== desired.pattern) differences.push("pattern");
  if (actual["apply-to"] !== desired["apply-to"]) differences.push("applyTo");
  if (actual.priority !== desired.priority) differences.push("priority");
  if (!sameJson(actual.definition, desired.definition)) differences.push("definition");
  return readBack(true, differences);
}
