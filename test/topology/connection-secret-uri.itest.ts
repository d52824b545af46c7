// A connection Secret whose uri carries userinfo, against the local broker. Served as upstream serves
// it: its client logs in with the Secret's username and password keys and ignores the URL's userinfo,
// so the Vhost reads Ready, is deleted on the broker with the resource, and the userinfo's password
// shows in no log line or condition. A uri that is no http(s) URL is refused with a condition that says
// why, and a deletion then lets the object go without the broker: nothing was ever declared through it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { topologyKinds, vhostKind } from "../../src/api/index.ts";
import { apiPath, deleteVhost } from "../../src/topology/broker/index.ts";
import { topologyKind } from "../../src/topology/index.ts";
import { reconcileExternal } from "../../src/external/index.ts";
import {
  admin,
  cluster,
  condition,
  createResource,
  deleteResource,
  env,
  getResource,
  logLinesHolding,
  makeDeps,
  setUpNamespace,
  settle,
  tearDownNamespace,
  unique,
} from "./controller-harness.ts";

const vhostAnswer = z.looseObject({ name: z.string() });
const uriPassword = "uri-secret-d41d8c";

let namespace = "";
const brokerVhosts: string[] = [];

beforeAll(async () => {
  namespace = await setUpNamespace("topo-conn-uri");
});
afterAll(async () => {
  await tearDownNamespace(namespace, topologyKinds);
  for (const vhost of brokerVhosts) await deleteVhost(admin, vhost).catch(() => undefined);
});

async function connectionSecret(uri: string): Promise<string> {
  const name = unique("conn-uri");
  await cluster.core.createNamespacedSecret({
    namespace,
    body: {
      metadata: { name, labels: { "rabbitmq.com/topology-operator": "true" } },
      stringData: { uri, username: env.RABBITMQ_ADMIN_USERNAME, password: env.RABBITMQ_ADMIN_PASSWORD },
    },
  });
  return name;
}

async function vhostThrough(secret: string): Promise<string> {
  const name = unique("conn-uri");
  brokerVhosts.push(name);
  await createResource(vhostKind, namespace, name, {
    name,
    rabbitmqClusterReference: { connectionSecret: { name: secret } },
  });
  return name;
}

const noUriPassword = async (name: string) => {
  expect(JSON.stringify(await getResource(vhostKind, namespace, name))).not.toContain(uriPassword);
  expect(logLinesHolding([uriPassword])).toEqual([]);
};

describe("a connection Secret whose uri carries userinfo", () => {
  it("is served with the Secret's username and password, and deleted on the broker with the resource", async () => {
    const deps = makeDeps();
    const management = new URL(env.RABBITMQ_MANAGEMENT_URL);
    management.username = "someone-else";
    management.password = uriPassword;
    const name = await vhostThrough(await connectionSecret(management.href));
    await settle(topologyKind.vhost, deps, namespace, name);
    expect(condition(await getResource(vhostKind, namespace, name), "Ready")?.status).toBe("True");
    expect(await admin.find(apiPath("vhosts", name), vhostAnswer)).toMatchObject({ name });
    await noUriPassword(name);

    await deleteResource(vhostKind, namespace, name);
    await settle(topologyKind.vhost, deps, namespace, name);
    expect(await getResource(vhostKind, namespace, name)).toBeUndefined();
    expect(await admin.find(apiPath("vhosts", name), vhostAnswer)).toBeUndefined();
  });

  it("refuses a uri that is no http(s) URL with a condition naming none of it, and lets go on deletion", async () => {
    const deps = makeDeps();
    const name = await vhostThrough(
      await connectionSecret(
        `amqp://someone-else:${uriPassword}@127.0.0.1:${new URL(env.RABBITMQ_URL).port}`,
      ),
    );
    await expect(reconcileExternal(topologyKind.vhost, deps, namespace, name)).rejects.toThrow(
      /must be http or https/,
    );
    expect(condition(await getResource(vhostKind, namespace, name), "Ready")).toMatchObject({
      status: "False",
      reason: "FailedCreateOrUpdate",
      message: expect.stringMatching(
        /^connection Secret .*: the management URL must be http or https, not amqp:$/,
      ),
    });

    // Never declared: nothing on the broker is the Vhost's, so the finalizer goes without a request.
    await noUriPassword(name);
    await deleteResource(vhostKind, namespace, name);
    expect(await reconcileExternal(topologyKind.vhost, deps, namespace, name)).toEqual({});
    expect(await getResource(vhostKind, namespace, name)).toBeUndefined();
    expect(logLinesHolding([uriPassword])).toEqual([]);
  });
});
