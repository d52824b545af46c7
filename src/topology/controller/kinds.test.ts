import { describe, expect, it } from "vitest";
import { topologyControllerKinds } from "./kinds.ts";

const kindNamed = (name: string) => {
  const found = topologyControllerKinds.find((k) => k.kind.kind === name);
  if (!found) throw new Error(`no kind ${name}`);
  return found;
};

const object = (kind: string, spec: Record<string, unknown>) => ({
  apiVersion: "rabbitmq.com/v1beta1",
  kind,
  metadata: { name: "x", namespace: "app" },
  spec,
});

describe("secretsOf: the Secrets whose change re-reconciles an object", () => {
  it("names a User's imported credentials beside it and a connection Secret in the reference's namespace", () => {
    const user = object("User", {
      importCredentialsSecret: { name: "creds" },
      rabbitmqClusterReference: { namespace: "shared", connectionSecret: { name: "conn" } },
    });
    expect(kindNamed("User").secretsOf(user)).toEqual([
      { namespace: "app", name: "creds" },
      { namespace: "shared", name: "conn" },
    ]);
  });

  it("reads a connection Secret beside the object when the reference has no namespace", () => {
    const vhost = object("Vhost", {
      name: "v",
      rabbitmqClusterReference: { connectionSecret: { name: "conn" } },
    });
    expect(kindNamed("Vhost").secretsOf(vhost)).toEqual([{ namespace: "app", name: "conn" }]);
  });

  it("names none for a reference to a RabbitmqCluster, or for an object that does not parse", () => {
    const vhost = object("Vhost", { name: "v", rabbitmqClusterReference: { name: "rmq", namespace: "cp" } });
    expect(kindNamed("Vhost").secretsOf(vhost)).toEqual([]);
    expect(kindNamed("Vhost").secretsOf({ spec: "not an object" })).toEqual([]);
  });
});
