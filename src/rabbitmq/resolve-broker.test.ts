import { describe, expect, it } from "vitest";
import {
  allowedNamespacesAnnotation,
  connectionUriAnnotation,
  resolveBroker,
  type BrokerLookup,
  type LookedUpCluster,
  type LookedUpSecret,
  type LookedUpService,
} from "./resolve-broker.ts";

interface World {
  clusters?: Record<string, LookedUpCluster>;
  secrets?: Record<string, LookedUpSecret>;
  services?: Record<string, LookedUpService>;
}

function lookup(world: World): BrokerLookup {
  return {
    cluster: async (ns, name) => world.clusters?.[`${ns}/${name}`],
    secret: async (ns, name) => world.secrets?.[`${ns}/${name}`],
    service: async (ns, name) => world.services?.[`${ns}/${name}`],
  };
}

const settings = { domain: ".cluster.local" };

const cluster = (extra: Partial<LookedUpCluster> = {}): LookedUpCluster => ({
  metadata: {},
  spec: { replicas: 1 },
  status: { binding: { name: "rmq-default-user" }, defaultUser: { serviceReference: { name: "rmq" } } },
  ...extra,
});
const binding: LookedUpSecret = { metadata: {}, values: { username: "admin", password: "pw" } };
const service = (ports: LookedUpService["ports"]): LookedUpService => ({ metadata: {}, ports });

const managed: World = {
  clusters: { "cp/rmq": cluster() },
  secrets: { "cp/rmq-default-user": binding },
  services: {
    "cp/rmq": service([
      { name: "amqp", port: 5672 },
      { name: "management", port: 15672 },
    ]),
  },
};

describe("resolveBroker from a RabbitmqCluster", () => {
  it("takes the annotation without a scheme as http, and drops its userinfo", async () => {
    const annotated = (uri: string) => ({
      ...managed,
      clusters: { "cp/rmq": cluster({ metadata: { annotations: { [connectionUriAnnotation]: uri } } }) },
    });
    for (const [uri, url] of [
      ["127.0.0.1:25681", "http://127.0.0.1:25681"],
      ["rabbit.example:15671/mgmt/", "http://rabbit.example:15671/mgmt"],
      ["https://x:annotation-secret@rabbit.example:15671", "https://rabbit.example:15671"],
    ] as const) {
      const got = await resolveBroker({ name: "rmq" }, "cp", lookup(annotated(uri)), settings);
      expect(got).toMatchObject({ outcome: "ready", connection: { url } });
      expect(JSON.stringify(got)).not.toContain("annotation-secret");
    }
  });

  it("builds the in-cluster management URL from the service and the domain", async () => {
    const got = await resolveBroker({ name: "rmq" }, "cp", lookup(managed), settings);
    expect(got).toMatchObject({
      outcome: "ready",
      connection: { url: "http://rmq.cp.svc.cluster.local:15672", username: "admin", password: "pw" },
    });
  });

  it("puts the cluster's management.path_prefix on the URL, as upstream does", async () => {
    const prefixed = cluster({
      spec: { replicas: 1, rabbitmq: { additionalConfig: "management.path_prefix = /rabbit\n" } },
    });
    const world = { ...managed, clusters: { "cp/rmq": prefixed } };
    const got = await resolveBroker({ name: "rmq" }, "cp", lookup(world), settings);
    expect(got).toMatchObject({ connection: { url: "http://rmq.cp.svc.cluster.local:15672/rabbit" } });
  });

  it("leaves the connection-uri annotation's URL as it is, path prefix or not", async () => {
    const annotated = cluster({
      metadata: { annotations: { [connectionUriAnnotation]: "https://broker.example:443/own" } },
      spec: { replicas: 1, rabbitmq: { additionalConfig: "management.path_prefix = /rabbit" } },
    });
    const world = { ...managed, clusters: { "cp/rmq": annotated } };
    const got = await resolveBroker({ name: "rmq" }, "cp", lookup(world), settings);
    expect(got).toMatchObject({ connection: { url: "https://broker.example:443/own" } });
  });

  it("uses https on the management-tls port", async () => {
    const world = { ...managed, services: { "cp/rmq": service([{ name: "management-tls", port: 15671 }]) } };
    const got = await resolveBroker({ name: "rmq" }, "cp", lookup(world), settings);
    expect(got).toMatchObject({ connection: { url: "https://rmq.cp.svc.cluster.local:15671" } });
  });

  it("lets the connection-uri annotation override the URL", async () => {
    const world = {
      ...managed,
      clusters: {
        "cp/rmq": cluster({ metadata: { annotations: { [connectionUriAnnotation]: "127.0.0.1:35673" } } }),
      },
    };
    const got = await resolveBroker({ name: "rmq" }, "cp", lookup(world), settings);
    expect(got).toMatchObject({ outcome: "ready", connection: { url: "http://127.0.0.1:35673" } });
  });

  it("needs no Service when the connection-uri annotation names the broker", async () => {
    const world = {
      ...managed,
      clusters: {
        "cp/rmq": cluster({ metadata: { annotations: { [connectionUriAnnotation]: "broker:15672" } } }),
      },
      services: {},
    };
    const got = await resolveBroker({ name: "rmq" }, "cp", lookup(world), settings);
    expect(got).toMatchObject({ outcome: "ready", connection: { url: "http://broker:15672" } });
  });

  it("reads the broker as gone only when the cluster itself is missing", async () => {
    const got = await resolveBroker({ name: "rmq" }, "cp", lookup({ ...managed, clusters: {} }), settings);
    expect(got).toEqual({ outcome: "gone", reason: "RabbitmqCluster cp/rmq not found" });
  });

  // The broker may still hold what a deleted object declared: not gone, so a deletion waits for it.
  it.each([
    [
      "it is scaled to zero",
      { ...managed, clusters: { "cp/rmq": cluster({ spec: { replicas: 0 } }) } },
      "RabbitmqCluster cp/rmq is scaled to zero",
    ],
    [
      "its Secret is missing",
      { ...managed, secrets: {} },
      "RabbitmqCluster cp/rmq: Secret cp/rmq-default-user not found",
    ],
    [
      "its Service is missing",
      { ...managed, services: {} },
      "RabbitmqCluster cp/rmq: Service cp/rmq not found",
    ],
  ])("waits for the broker when %s", async (_what, world, reason) => {
    const got = await resolveBroker({ name: "rmq" }, "cp", lookup(world), settings);
    expect(got).toEqual({ outcome: "waiting", reason });
  });

  it("waits for a cluster whose status has no service reference yet", async () => {
    const world = { ...managed, clusters: { "cp/rmq": cluster({ status: {} }) } };
    expect((await resolveBroker({ name: "rmq" }, "cp", lookup(world), settings)).outcome).toBe("waiting");
  });

  it("refuses a cluster in another namespace without consent, and accepts it with consent", async () => {
    const refused = await resolveBroker(
      { name: "rmq", namespace: "cp" },
      "tenant",
      lookup(managed),
      settings,
    );
    expect(refused).toMatchObject({
      outcome: "refused",
      reason: expect.stringContaining(allowedNamespacesAnnotation),
    });
    for (const consent of ["tenant", "other, tenant", "*"]) {
      const world = {
        ...managed,
        clusters: {
          "cp/rmq": cluster({ metadata: { annotations: { [allowedNamespacesAnnotation]: consent } } }),
        },
      };
      const got = await resolveBroker({ name: "rmq", namespace: "cp" }, "tenant", lookup(world), settings);
      expect(got.outcome).toBe("ready");
    }
  });
});

describe("resolveBroker from a connection Secret", () => {
  const labelled = (values: Record<string, string>): LookedUpSecret => ({
    metadata: { labels: { "rabbitmq.com/topology-operator": "true" } },
    values,
  });

  it("reads uri, username and password, assuming http without a scheme", async () => {
    const world = {
      secrets: { "app/conn": labelled({ uri: "broker:15672", username: "u", password: "p" }) },
    };
    const got = await resolveBroker({ connectionSecret: { name: "conn" } }, "app", lookup(world), settings);
    expect(got).toMatchObject({
      outcome: "ready",
      connection: { url: "http://broker:15672", username: "u" },
    });
  });

  it("keeps an https scheme", async () => {
    const world = {
      secrets: { "app/conn": labelled({ uri: "https://broker:15671", username: "u", password: "p" }) },
    };
    const got = await resolveBroker({ connectionSecret: { name: "conn" } }, "app", lookup(world), settings);
    expect(got).toMatchObject({ connection: { url: "https://broker:15671" } });
  });

  it("refuses an unlabelled Secret and waits for a missing one", async () => {
    const unlabelled = {
      secrets: { "app/conn": { metadata: {}, values: { uri: "x", username: "u", password: "p" } } },
    };
    const refused = await resolveBroker(
      { connectionSecret: { name: "conn" } },
      "app",
      lookup(unlabelled),
      settings,
    );
    expect(refused.outcome).toBe("refused");
    const gone = await resolveBroker({ connectionSecret: { name: "conn" } }, "app", lookup({}), settings);
    // Not "gone": a missing Secret says nothing about the broker behind it (upstream keeps a finalizer).
    expect(gone.outcome).toBe("waiting");
  });

  it("uses an unlabelled Secret when asked to, still only with its consent from another namespace", async () => {
    const values = { uri: "broker:15672", username: "u", password: "p" };
    const world = lookup({
      secrets: { "app/conn": { metadata: {}, values }, "shared/conn": { metadata: {}, values } },
    });
    const asked = { unlabelledSecret: true };
    expect(
      await resolveBroker({ connectionSecret: { name: "conn" } }, "app", world, settings, asked),
    ).toMatchObject({
      outcome: "ready",
      connection: { url: "http://broker:15672", username: "u" },
    });
    const elsewhere = { namespace: "shared", connectionSecret: { name: "conn" } };
    expect(await resolveBroker(elsewhere, "app", world, settings, asked)).toMatchObject({
      outcome: "refused",
      reason: expect.stringMatching(/does not allow topology resources from namespace app/),
    });
  });

  it("reads a Secret in the reference's namespace only with that Secret's consent", async () => {
    const values = { uri: "broker:15672", username: "u", password: "p" };
    const ref = { namespace: "shared", connectionSecret: { name: "conn" } };
    const without = { secrets: { "shared/conn": labelled(values) } };
    expect(await resolveBroker(ref, "app", lookup(without), settings)).toMatchObject({
      outcome: "refused",
      reason: expect.stringMatching(/connection Secret shared\/conn does not allow .* namespace app/),
    });
    for (const consent of ["app", "other,app", "*"]) {
      const secret = labelled(values);
      secret.metadata.annotations = { [allowedNamespacesAnnotation]: consent };
      const got = await resolveBroker(ref, "app", lookup({ secrets: { "shared/conn": secret } }), settings);
      expect(got).toMatchObject({ outcome: "ready", connection: { url: "http://broker:15672" } });
    }
    // The reference's namespace is the resource's own: no consent needed, and no other Secret read.
    const own = { secrets: { "app/conn": labelled(values), "shared/conn": labelled({}) } };
    const got = await resolveBroker({ ...ref, namespace: "app" }, "app", lookup(own), settings);
    expect(got.outcome).toBe("ready");
  });

  it("serves a uri with userinfo as upstream does: the username and password keys log in, the userinfo is dropped", async () => {
    const world = {
      secrets: {
        "app/conn": labelled({ uri: "https://old:uri-secret@broker:15671/p/", username: "u", password: "p" }),
      },
    };
    const got = await resolveBroker({ connectionSecret: { name: "conn" } }, "app", lookup(world), settings);
    expect(got).toEqual({
      outcome: "ready",
      connection: { url: "https://broker:15671/p", username: "u", password: "p", ca: undefined },
      key: "u@https://broker:15671/p",
    });
    expect(JSON.stringify(got)).not.toContain("uri-secret");
  });

  it("refuses a uri that is no http(s) URL with a reason that quotes none of it", async () => {
    for (const uri of ["amqp://u:uri-secret@broker:5672", "http://u:uri-secret@[broker"]) {
      const world = { secrets: { "app/conn": labelled({ uri, username: "u", password: "p" }) } };
      const got = await resolveBroker({ connectionSecret: { name: "conn" } }, "app", lookup(world), settings);
      expect(got).toMatchObject({
        outcome: "refused",
        reason: expect.stringMatching(
          /^connection Secret app\/conn: the management URL (must be http|is not a valid)/,
        ),
      });
      expect(JSON.stringify(got)).not.toContain("uri-secret");
    }
  });

  it("waits while a key is missing, without naming any value", async () => {
    const world = { secrets: { "app/conn": labelled({ uri: "broker", username: "u", password: "" }) } };
    const got = await resolveBroker({ connectionSecret: { name: "conn" } }, "app", lookup(world), settings);
    expect(got).toMatchObject({
      outcome: "waiting",
      reason: expect.stringContaining("uri, username and password"),
    });
  });
});
