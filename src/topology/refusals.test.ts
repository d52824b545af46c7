// The wording of 4.x refusals. The answers are those the local RabbitMQ 4.3.6 and 4.0.5 nodes sent
// (test/topology/rabbitmq-4x-features.itest.ts asserts the same conditions against them); the one no local node
// can send, transient_nonexcl_queues denied by configuration, is 4.3.6's notice for another feature
// with that feature's name, as rabbit_deprecated_features words every denied feature.
import { describe, expect, it } from "vitest";
import { apiPath, errorForStatus } from "./broker/index.ts";
import { defaultControllerSettings } from "./deps.ts";
import { brokerFailure } from "./failures.ts";
import {
  ExplainedRefusal,
  explainPolicyDeclaration,
  explainQueueDeclaration,
  explainVhostDeletion,
} from "./refusals.ts";

const finalizer = "deletion.finalizers.vhosts.rabbitmq.com";
const badRequest = (method: string, path: string, reason: string) =>
  errorForStatus(method, path, 400, JSON.stringify({ error: "bad_request", reason }));
const message = (error: unknown) => brokerFailure(error, defaultControllerSettings, [])?.message;

/** 4.3.6's notice of a feature in its denied_by_default phase (rabbit_deprecated_features). */
const deniedNotice = (feature: string) =>
  `Feature \`${feature}\` is deprecated.\n` +
  "By default, this feature is not permitted anymore.\n" +
  "The feature will be removed from a future major RabbitMQ version, regardless of the configuration; actual version to be determined.\n" +
  "To continue using this feature when it is not permitted by default, set the following parameter in your configuration:\n" +
  `    "deprecated_features.permit.${feature} = true"`;

describe("a vhost protected from deletion (RabbitMQ 4.x)", () => {
  const path = apiPath("vhosts", "tenant a");
  const error = errorForStatus(
    "DELETE",
    path,
    412,
    JSON.stringify({
      error: "precondition_failed",
      reason: "Refusing to delete virtual host 'tenant a' because it is protected from deletion",
    }),
  );

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

describe("a Queue that needs a denied deprecated feature", () => {
  const path = apiPath("queues", "/", "work");

  it("non-durable: says why and what to do, without the deprecation notice's lines", () => {
    const explained = explainQueueDeclaration(
      badRequest("PUT", path, deniedNotice("transient_nonexcl_queues")),
    );
    expect(explained).toBeInstanceOf(ExplainedRefusal);
    expect(brokerFailure(explained, defaultControllerSettings, [])?.refusal).toBe(true);
    expect(message(explained)).toBe(
      "PUT /api/queues/%2F/work: 400 the broker denies the deprecated feature transient_nonexcl_queues " +
        "(non-durable queues that are not exclusive): recreate the Queue with durable: true (the field is immutable), " +
        "or permit the feature on the broker (deprecated_features.permit.transient_nonexcl_queues = true)",
    );
  });

  it("x-queue-master-locator: names the argument and its successor", () => {
    const explained = explainQueueDeclaration(badRequest("PUT", path, deniedNotice("queue_master_locator")));
    expect(message(explained)).toBe(
      "PUT /api/queues/%2F/work: 400 the broker denies the deprecated feature queue_master_locator " +
        "(the queue argument x-queue-master-locator): recreate the Queue without x-queue-master-locator, " +
        "x-queue-leader-locator replaces it (arguments are immutable), or permit the feature on the broker " +
        "(deprecated_features.permit.queue_master_locator = true)",
    );
  });

  it("another feature: named, with the general remedy", () => {
    const explained = explainQueueDeclaration(badRequest("PUT", path, deniedNotice("some_future_thing")));
    expect(message(explained)).toBe(
      "PUT /api/queues/%2F/work: 400 the broker denies the deprecated feature some_future_thing " +
        "that this queue's declaration uses: recreate the Queue without it, or permit the feature on the broker " +
        "(deprecated_features.permit.some_future_thing = true)",
    );
  });

  it("leaves an inequivalent redeclaration to the broker's own reason", () => {
    const inequivalent = badRequest(
      "PUT",
      path,
      "inequivalent arg 'durable' for queue 'work' in vhost '/': received 'false' but current is 'true'",
    );
    expect(explainQueueDeclaration(inequivalent)).toBe(inequivalent);
  });
});

describe("a Policy with a feature 4.x denies or removed", () => {
  const path = apiPath("policies", "/", "p");

  it("queue-master-locator (denied by default on 4.3)", () => {
    const error = badRequest(
      "PUT",
      path,
      "Validation failed\n\nuse of deprecated queue-master-locator argument is not permitted\n",
    );
    expect(message(explainPolicyDeclaration(error))).toBe(
      "PUT /api/policies/%2F/p: 400 the broker denies the deprecated feature queue_master_locator " +
        "(the policy key queue-master-locator): remove queue-master-locator from the definition, " +
        "queue-leader-locator replaces it, or permit the feature on the broker " +
        "(deprecated_features.permit.queue_master_locator = true)",
    );
  });

  it("ha-* keys, as 4.3 sends them and as 4.0 sends them (HTML-escaped)", () => {
    const expected =
      "PUT /api/policies/%2F/p: 400 the broker does not know the policy keys ha-mode, ha-params: " +
      "classic queue mirroring (deprecated feature classic_queue_mirroring) was removed in RabbitMQ 4.0; " +
      "remove the ha-* keys from the definition (quorum queues replicate instead)";
    const plain =
      'Validation failed\n\n[{<<"ha-mode">>,<<"exactly">>},{<<"ha-params">>,2}] are not recognised policy settings\n';
    expect(message(explainPolicyDeclaration(badRequest("PUT", path, plain)))).toBe(expected);
    const escaped = plain.replace(/</g, "&lt;").replace(/>/g, "&gt;");
    expect(message(explainPolicyDeclaration(badRequest("PUT", path, escaped)))).toBe(expected);
  });

  it("leaves another unknown key to the broker's own reason", () => {
    const error = badRequest(
      "PUT",
      path,
      'Validation failed\n\n[{&lt;&lt;"foo-bar"&gt;&gt;,&lt;&lt;"x"&gt;&gt;}] are not recognised policy settings\n',
    );
    expect(explainPolicyDeclaration(error)).toBe(error);
    expect(message(error)).toBe(
      'PUT /api/policies/%2F/p: 400 Validation failed\n\n[{<<"foo-bar">>,<<"x">>}] are not recognised policy settings\n',
    );
  });
});
