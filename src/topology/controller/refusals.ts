// Refusals of newer brokers (RabbitMQ 4.x) that the broker's own reason does not explain to the owner
// of the object: what blocks, and what lifts it. Each stays the broker's verdict on the request, so
// it is retried with the refusal backoff; the fixtures in test/topology/fixtures/rabbitmq-4x.ts name
// where each answer comes from.
import { ManagementApiError, apiPath } from "../broker/index.ts";

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
 * A non-durable queue, which the management API can only declare non-exclusive: RabbitMQ 4.3 denies
 * the deprecated feature `transient_nonexcl_queues` by default (earlier 4.x when configured so) and
 * answers 400 with the feature's deprecation notice.
 */
export function explainQueueDeclaration(error: unknown): unknown {
  if (!(error instanceof ManagementApiError) || error.status !== 400) return error;
  if (!/\btransient_nonexcl_queues\b/.test(error.reason)) return error;
  return new ExplainedRefusal(
    `${error.method} ${error.path}: ${error.status} the broker refuses non-durable queues that are not exclusive ` +
      "(deprecated feature transient_nonexcl_queues, denied by default from RabbitMQ 4.3): recreate the Queue with durable: true " +
      "(the field is immutable), or permit the feature on the broker (deprecated_features.permit.transient_nonexcl_queues = true)",
    { cause: error },
  );
}
