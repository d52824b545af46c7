import { describe, expect, it } from "vitest";
import {
  transientQueueRefused,
  vhostProtectedFromDeletion,
  type RecordedAnswer,
} from "../../../test/topology/fixtures/rabbitmq-4x.ts";
import { apiPath, errorForStatus } from "../broker/index.ts";
import { defaultControllerSettings } from "./deps.ts";
import { brokerFailure } from "./failures.ts";
import { ExplainedRefusal, explainQueueDeclaration, explainVhostDeletion } from "./refusals.ts";

const finalizer = "deletion.finalizers.vhosts.rabbitmq.com";
const failed = (method: string, path: string, answer: RecordedAnswer) =>
  errorForStatus(method, path, answer.status, answer.body);

describe("a vhost protected from deletion (RabbitMQ 4.x)", () => {
  const path = apiPath("vhosts", "tenant a");
  const error = failed("DELETE", path, vhostProtectedFromDeletion("tenant a"));

  it("is a refusal that names the protection, how to lift it and how to let go", () => {
    const explained = explainVhostDeletion(error, "tenant a", finalizer);
    expect(explained).toBeInstanceOf(ExplainedRefusal);
    const failure = brokerFailure(explained, defaultControllerSettings, []);
    expect(failure?.refusal).toBe(true);
    expect(failure?.message).toBe(
      "DELETE /api/vhosts/tenant%20a: 412 Refusing to delete virtual host 'tenant a' because it is protected " +
        "from deletion. It is deleted once the protection is lifted (DELETE /api/vhosts/tenant%20a/deletion/protection, " +
        'or rabbitmqctl disable_vhost_deletion_protection "tenant a"); to leave the vhost on the broker instead, ' +
        `remove the finalizer ${finalizer}`,
    );
  });

  it("leaves any other failure as it is", () => {
    const other = errorForStatus(
      "DELETE",
      path,
      412,
      '{"error":"precondition_failed","reason":"something else"}',
    );
    expect(explainVhostDeletion(other, "tenant a", finalizer)).toBe(other);
    const server = errorForStatus(
      "DELETE",
      path,
      500,
      '{"error":"internal_server_error","reason":"timeout"}',
    );
    expect(explainVhostDeletion(server, "tenant a", finalizer)).toBe(server);
  });
});

describe("a transient non-exclusive queue (RabbitMQ 4.3)", () => {
  const path = apiPath("queues", "/", "work");
  const error = failed("PUT", path, transientQueueRefused());

  it("is a refusal that says why and what to do, without the deprecation notice's lines", () => {
    const failure = brokerFailure(explainQueueDeclaration(error), defaultControllerSettings, []);
    expect(failure?.refusal).toBe(true);
    expect(failure?.message).toBe(
      "PUT /api/queues/%2F/work: 400 the broker refuses non-durable queues that are not exclusive (deprecated " +
        "feature transient_nonexcl_queues, denied by default from RabbitMQ 4.3): recreate the Queue with durable: true (the field " +
        "is immutable), or permit the feature on the broker (deprecated_features.permit.transient_nonexcl_queues = true)",
    );
  });

  it("leaves an inequivalent redeclaration to the broker's own reason", () => {
    const inequivalent = errorForStatus(
      "PUT",
      path,
      400,
      `{"error":"bad_request","reason":"inequivalent arg 'durable' for queue 'work' in vhost '/': received 'false' but current is 'true'"}`,
    );
    expect(explainQueueDeclaration(inequivalent)).toBe(inequivalent);
  });
});
