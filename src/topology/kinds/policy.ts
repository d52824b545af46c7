// Policy: pattern, apply-to (default all), priority (default 0) and definition.
import { listedPolicy } from "../broker/listed-compare.ts";
import { PolicySchema, policyKind, type Policy } from "../../api/index.ts";
import {
  DEFAULT_VHOST,
  declarePolicy,
  deletePolicy,
  readBackPolicy,
  type PolicySpec,
} from "../broker/index.ts";
import type { TopologyKind } from "../backend.ts";
import { explainPolicyDeclaration } from "../refusals.ts";

export function policySpec(policy: Policy): PolicySpec {
  const { spec } = policy;
  return {
    name: spec.name,
    vhost: spec.vhost ?? DEFAULT_VHOST,
    pattern: spec.pattern,
    applyTo: spec.applyTo ?? "all",
    priority: spec.priority ?? 0,
    definition: spec.definition,
  };
}

export const policy: TopologyKind<Policy, PolicySpec> = {
  kind: policyKind,
  schema: PolicySchema,
  secretsOf: () => [],
  desired: async (_deps, policy) => ({ outcome: "ready", spec: policySpec(policy) }),
  declare: (client, spec) =>
    declarePolicy(client, spec).catch((error: unknown) => {
      throw explainPolicyDeclaration(error);
    }),
  readBack: readBackPolicy,
  listed: listedPolicy,
  async remove(_deps, client, policy) {
    await deletePolicy(client, policySpec(policy));
  },
};
