// Refusals of newer brokers (RabbitMQ 4.x) that the broker's own reason does not explain to the owner
// of the object: what blocks, and what lifts it. Each stays the broker's verdict on the request, so
// it is retried with the refusal backoff. The answers are those of the local 4.3 and 4.0 nodes
// (test/topology/rabbitmq-4x-features.itest.ts).
import { ManagementApiError, apiPath } from "./broker/index.ts";

/** A broker refusal, worded for the object's condition. */
export class ExplainedRefusal extends Error {
  override name = "ExplainedRefusal";
}

/**
 * DELETE of a vhost whose metadata says `protected_from_deletion` (RabbitMQ 4.0.6 and 4.1 on):
 * 412 "Refusing to delete virtual host '…' because it is protected from deletion".
 */
export function explainVhostDeletion(error: unknown, vhost: string, finalizer: string): unknown {
  if (!(error instanceof ManagementApiError) || error.status !== 412) return error;
  if (!/protected from deletion/i.test(error.reason)) return error;
  return new ExplainedRefusal(
    `${error.method} ${error.path}: ${error.status} ${error.reason}. It is deleted once the protection is lifted ` +
      `(DELETE ${apiPath("vhosts", vhost, "deletion", "protection")}, or rabbitmqctl disable_vhost_deletion_protection ${JSON.stringify(vhost)}); ` +
      `to leave the vhost on the broker instead, remove the finalizer ${finalizer}`,
    { cause: error },
  );
}

/**
 * The feature a declaration was denied: RabbitMQ 4.x answers 400 with the deprecation notice of
 * rabbit_deprecated_features ("Feature `queue_master_locator` is deprecated.\nBy default, this feature
 * is not permitted anymore. …"), five lines naming the configuration that permits it.
 */
function deniedFeature(error: ManagementApiError): string | undefined {
  const match = /^Feature `(\w+)` is deprecated\.[\s\S]*\bnot permitted\b/.exec(error.reason);
  return match?.[1];
}

function deniedFeatureRefusal(error: ManagementApiError, feature: string, what: string, remedy: string) {
  return new ExplainedRefusal(
    `${error.method} ${error.path}: ${error.status} the broker denies the deprecated feature ${feature} ${what}: ` +
      `${remedy}, or permit the feature on the broker (deprecated_features.permit.${feature} = true)`,
    { cause: error },
  );
}

/** What a Queue that meets a denied feature can change, by feature. */
const queueRemedies: Record<string, { what: string; remedy: string }> = {
  // The management API declares no exclusive queue, so every non-durable Queue needs the feature.
  transient_nonexcl_queues: {
    what: "(non-durable queues that are not exclusive)",
    remedy: "recreate the Queue with durable: true (the field is immutable)",
  },
  queue_master_locator: {
    what: "(the queue argument x-queue-master-locator)",
    remedy:
      "recreate the Queue without x-queue-master-locator, x-queue-leader-locator replaces it (arguments are immutable)",
  },
};

/**
 * A Queue declaration that needs a deprecated feature the broker denies: `transient_nonexcl_queues`
 * (any non-durable Queue; permitted by default up to 4.3, denied where configured so),
 * `queue_master_locator` (denied by default on 4.3), or another the broker names.
 */
export function explainQueueDeclaration(error: unknown): unknown {
  if (!(error instanceof ManagementApiError) || error.status !== 400) return error;
  const feature = deniedFeature(error);
  if (feature === undefined) return error;
  const known = queueRemedies[feature];
  return deniedFeatureRefusal(
    error,
    feature,
    known?.what ?? "that this queue's declaration uses",
    known?.remedy ?? "recreate the Queue without it",
  );
}

/**
 * A Policy the broker refuses for a feature 4.x denies or removed: `queue-master-locator` in the
 * definition (deprecated feature queue_master_locator, denied by default on 4.3: "Validation failed
 * … use of deprecated queue-master-locator argument is not permitted"), or the `ha-*` keys of classic
 * queue mirroring, removed in 4.0 (the broker only says they "are not recognised policy settings").
 */
export function explainPolicyDeclaration(error: unknown): unknown {
  if (!(error instanceof ManagementApiError) || error.status !== 400) return error;
  if (/\bdeprecated queue-master-locator\b.*\bnot permitted\b/.test(error.reason)) {
    return deniedFeatureRefusal(
      error,
      "queue_master_locator",
      "(the policy key queue-master-locator)",
      "remove queue-master-locator from the definition, queue-leader-locator replaces it",
    );
  }
  const mirroring = [...error.reason.matchAll(/<<"(ha-[a-z-]+)">>/g)].map((m) => m[1]);
  if (mirroring.length > 0 && /\bnot recognised policy settings\b/.test(error.reason)) {
    return new ExplainedRefusal(
      `${error.method} ${error.path}: ${error.status} the broker does not know the policy keys ${[...new Set(mirroring)].join(", ")}: ` +
        "classic queue mirroring (deprecated feature classic_queue_mirroring) was removed in RabbitMQ 4.0; " +
        "remove the ha-* keys from the definition (quorum queues replicate instead)",
      { cause: error },
    );
  }
  return error;
}
