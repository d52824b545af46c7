import { describe, expect, it } from "vitest";
import * as core from "../core/delivery.ts";
import { apiErrorText } from "../core/errors.ts";
import { KubeApiError, type KubeObject } from "../../runtime/port/kube-rest.ts";
import { loginFailure } from "./amqp-login-check.ts";
import { type OrderIdentity } from "../core/naming.ts";
import { RABBITMQ_NAMING } from "./naming.ts";
import { deliveredData } from "./delivered-data.ts";

const deliveredSecret = (o: OrderIdentity, d: Record<string, string>) =>
  core.deliveredSecret(RABBITMQ_NAMING, o, d);
const carries = (s: KubeObject, d: Record<string, string>, o: OrderIdentity) =>
  core.carries(RABBITMQ_NAMING, s, d, o);

const order = { cluster: "", namespace: "tenant-a", name: "workflow", uid: "u-1" };
const data = deliveredData({
  username: "w-v1",
  password: "p@ss:w/rd",
  host: "127.0.0.1",
  port: 5672,
  vhost: "w",
});

describe("the delivered Secret", () => {
  const secret = deliveredSecret(order, data);

  it("carries the six keys, the two labels and a controller reference to the order", () => {
    expect(Object.keys((secret["data"] ?? {}) as object)).toEqual([
      "transport_url",
      "host",
      "port",
      "username",
      "password",
      "vhost",
    ]);
    expect(secret.metadata?.labels).toEqual({
      "c5c3.io/rabbitmqvhost-name": "workflow",
      "c5c3.io/rabbitmqvhost-namespace": "tenant-a",
    });
    expect(secret.metadata?.ownerReferences).toEqual([
      {
        apiVersion: "c5c3.io/v1alpha1",
        kind: "RabbitMQVhost",
        name: "workflow",
        uid: "u-1",
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
  });

  it("needs no write while it carries the values; an edited key, a lost label or another owner does", () => {
    expect(carries(secret, data, order)).toBe(true);
    const withExtra = { ...secret, data: { ...(secret["data"] as object), note: "bWluZQ==" } };
    expect(carries(withExtra, data, order)).toBe(true);
    expect(
      carries({ ...secret, data: { ...(secret["data"] as object), password: "eA==" } }, data, order),
    ).toBe(false);
    expect(carries({ ...secret, metadata: { ...secret.metadata, labels: {} } }, data, order)).toBe(false);
    expect(carries(secret, data, { ...order, uid: "other" })).toBe(false);
  });
});

describe("texts for conditions", () => {
  it("name the broker's refusal without the password", () => {
    const error = new Error(
      'Handshake terminated by server: 403 (ACCESS-REFUSED) with message "ACCESS_REFUSED - Login was refused"',
    );
    expect(loginFailure(error, "secret-pw")).toBe("authentication failed (ACCESS_REFUSED)");
    expect(
      loginFailure(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }), "x"),
    ).toBe("connection failed (ECONNREFUSED)");
    expect(loginFailure(new Error("odd failure mentioning secret-pw"), "secret-pw")).not.toContain(
      "secret-pw",
    );
  });

  it("take the API server's message, never the request, and scrub named secrets", () => {
    const error = new KubeApiError("PATCH", "/api/v1/x", 422, "Invalid", "bad value hunter22");
    expect(apiErrorText(error, ["hunter22"])).toBe("HTTP 422: bad value [redacted]");
  });
});
