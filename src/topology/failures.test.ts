import { describe, expect, it } from "vitest";
import { apiPath, errorForStatus } from "./broker/index.ts";
import { defaultControllerSettings } from "./deps.ts";
import { brokerFailure } from "./failures.ts";

const settings = { ...defaultControllerSettings, waitingRetryMs: 1_000, transientRetryMs: 30_000 };
const queue = apiPath("queues", "tenant-a", "work");

describe("a 401 of the management API", () => {
  // RabbitMQ 3.10 answers a declaration in a vhost whose creator has no permissions yet (granted once the
  // vhost runs, a few milliseconds after the vhost appears) so; seen when a repaired vhost and its queue
  // are declared at once (e2e/drift-by-list.itest.ts).
  it("refusing a vhost the login may not enter yet is looked at again after the waiting interval, as a 404 is", () => {
    const refused = errorForStatus(
      "PUT",
      queue,
      401,
      '{"error":"not_authorised","reason":"Access refused."}',
    );
    expect(brokerFailure(refused, settings, [])).toEqual({
      message: "PUT /api/queues/tenant-a/work: 401 Access refused.",
      refusal: false,
      retryAfterMs: settings.waitingRetryMs,
    });
    const missing = errorForStatus("PUT", queue, 404, '{"error":"not_found","reason":"vhost_not_found"}');
    expect(brokerFailure(missing, settings, [])).toMatchObject({ refusal: false, retryAfterMs: 1_000 });
  });

  it("rejecting the login, and a 403, wait the transient interval", () => {
    const login = errorForStatus("PUT", queue, 401, '{"error":"not_authorized","reason":"Login failed"}');
    expect(brokerFailure(login, settings, [])).toEqual({
      message: "PUT /api/queues/tenant-a/work: 401 Login failed",
      refusal: false,
      retryAfterMs: settings.transientRetryMs,
    });
    const forbidden = errorForStatus("PUT", queue, 403, '{"error":"forbidden","reason":"Not administrator"}');
    expect(brokerFailure(forbidden, settings, [])).toMatchObject({ refusal: false, retryAfterMs: 30_000 });
  });
});
