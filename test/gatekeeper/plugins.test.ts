// The shipped plugins on their own: order-quota's count (annotation, setting, existing orders never
// refused, two passes racing for the last place), rotation-policy's bounds and clamp, log-resource's
// redacted line.
import { beforeEach, describe, expect, it } from "vitest";
import { mariaDBDatabaseKind, rabbitMQVhostKind } from "../../src/api/index.ts";
import type { EntryContext, GatekeeperPlugin } from "../../src/gatekeeper/api.ts";
import logResource from "../../src/gatekeeper/plugins/log-resource.ts";
import orderQuota, { QUOTA_ANNOTATION } from "../../src/gatekeeper/plugins/order-quota.ts";
import rotationPolicy, {
  applyPolicy,
  boundsFrom,
  formatDuration,
} from "../../src/gatekeeper/plugins/rotation-policy.ts";
import { apiError, FakeKube } from "../support/fake-kube.ts";
import { RecordingLog } from "./support.ts";

const namespaceKind = {
  group: "",
  version: "v1",
  kind: "Namespace",
  plural: "namespaces",
  namespaced: false,
};
const FINALIZER = "c5c3.io/rabbitmqvhost-teardown";

const configure = async (plugin: GatekeeperPlugin, kube: FakeKube, env: Record<string, string> = {}) =>
  plugin.configure?.({
    kube,
    kubernetesVersion: "v1.37.2",
    log: new RecordingLog(),
    clock: { now: () => 0 },
    env,
  });

const context = (kube: FakeKube, log = new RecordingLog(), teardown = false): EntryContext => ({
  kind: "RabbitMQVhost",
  cluster: "",
  kube,
  log,
  clock: { now: () => 0 },
  teardown,
});

describe("order-quota", () => {
  let kube: FakeKube;
  const entry = (name: string, teardown = false, cluster = "") => {
    const o = kube.read(rabbitMQVhostKind, "t", name);
    return orderQuota.validating?.RabbitMQVhost?.entry?.(
      { ...context(kube, new RecordingLog(), teardown), cluster },
      o as never,
    );
  };
  /** An order; `vhostReady` is the reason of the VhostReady its status carries, if any. */
  const put = (name: string, vhostReady?: string, finalizers: string[] = []) =>
    kube.put(rabbitMQVhostKind, {
      metadata: { name, namespace: "t", uid: `uid-${name}-${Math.random()}`, finalizers },
      spec: { controlPlaneRef: { name: "cp" } },
      ...(vhostReady
        ? {
            status: {
              conditions: [{ type: "VhostReady", status: "False", reason: vhostReady, message: "" }],
            },
          }
        : {}),
    });
  const annotate = (quota: string | undefined) =>
    kube.put(namespaceKind, {
      metadata: { name: "t", ...(quota === undefined ? {} : { annotations: { [QUOTA_ANNOTATION]: quota } }) },
    });

  beforeEach(async () => {
    kube = new FakeKube();
    await configure(orderQuota, kube);
  });

  it("refuses a new order beyond the namespace's annotation, and never an existing one", async () => {
    annotate("2");
    put("a", "Provisioning");
    put("b");
    await expect(entry("b")).resolves.toBeUndefined();
    put("c");
    await expect(entry("c")).rejects.toThrow(
      `namespace t may hold 2 RabbitMQVhost orders and holds 2: this new order is not provisioned until one is deleted or the quota (annotation ${QUOTA_ANNOTATION}) is raised`,
    );
    // Lowered below what exists: the existing orders go on.
    annotate("1");
    put("b", "Provisioning");
    await expect(entry("a")).resolves.toBeUndefined();
    await expect(entry("b")).resolves.toBeUndefined();
    // A teardown is never refused.
    await expect(entry("c", true)).resolves.toBeUndefined();
    // Once one is gone, a new one fits.
    annotate("2");
    kube.remove(rabbitMQVhostKind, "t", "a");
    await expect(entry("c")).resolves.toBeUndefined();
  });

  it("is not fooled by a teardown finalizer a tenant set at creation, nor by a rejection", async () => {
    annotate("1");
    put("a", "Provisioning");
    put("forged", undefined, [FINALIZER]);
    await expect(entry("forged")).rejects.toThrow(/may hold 1 RabbitMQVhost orders and holds 1/);
    put("refused", "GatekeeperRejected", [FINALIZER]);
    await expect(entry("refused")).rejects.toThrow(/may hold 1 RabbitMQVhost orders and holds 1/);
    // Neither took a place: with room for two, one of them gets it, the other still waits.
    annotate("2");
    await expect(entry("forged")).resolves.toBeUndefined();
    await expect(entry("refused")).rejects.toThrow(/may hold 2 RabbitMQVhost orders and holds 2/);
  });

  it("gives the last place to one of two passes running at once", async () => {
    annotate("1");
    put("x");
    put("y");
    const outcomes = await Promise.allSettled([entry("x"), entry("y")]);
    expect(outcomes.map((o) => o.status).sort()).toEqual(["fulfilled", "rejected"]);
  });

  it("counts MariaDBDatabase orders on their own, admitted by their DatabaseReady", async () => {
    annotate("1");
    put("a", "Provisioning");
    const database = (name: string, databaseReady?: string) =>
      kube.put(mariaDBDatabaseKind, {
        metadata: { name, namespace: "t", uid: `uid-${name}-${Math.random()}` },
        spec: { controlPlaneRef: { name: "cp" } },
        ...(databaseReady
          ? {
              status: {
                conditions: [{ type: "DatabaseReady", status: "False", reason: databaseReady, message: "" }],
              },
            }
          : {}),
      });
    const enter = (name: string) =>
      orderQuota.validating?.MariaDBDatabase?.entry?.(
        { ...context(kube), kind: "MariaDBDatabase" },
        kube.read(mariaDBDatabaseKind, "t", name) as never,
      );
    // The RabbitMQVhost takes no place of the databases'.
    database("d1", "Provisioning");
    database("d2");
    await expect(enter("d1")).resolves.toBeUndefined();
    await expect(enter("d2")).rejects.toThrow(
      `namespace t may hold 1 MariaDBDatabase orders and holds 1: this new order is not provisioned until one is deleted or the quota (annotation ${QUOTA_ANNOTATION}) is raised`,
    );
    // A VhostReady on a database is no evidence: only its own kind's condition is.
    kube.remove(mariaDBDatabaseKind, "t", "d1");
    database("d3");
    kube.put(mariaDBDatabaseKind, {
      ...kube.read(mariaDBDatabaseKind, "t", "d3"),
      status: { conditions: [{ type: "VhostReady", status: "True", reason: "Provisioned", message: "" }] },
    });
    await expect(enter("d2")).resolves.toBeUndefined();
    await expect(enter("d3")).rejects.toThrow(/may hold 1 MariaDBDatabase orders and holds 1/);
  });

  it("takes the setting where the namespace has no annotation, or may not be read; none means no limit", async () => {
    annotate(undefined);
    put("a", "Provisioning");
    put("b");
    await expect(entry("b")).resolves.toBeUndefined();
    await configure(orderQuota, kube, { VHOST_BROKER_ORDER_QUOTA: "1" });
    put("c");
    await expect(entry("c")).rejects.toThrow(/may hold 1 RabbitMQVhost orders/);
    // A target cluster's chart grants no namespace read; the management cluster's does.
    kube.failNext("get", namespaceKind, apiError(403, "Forbidden"));
    await expect(entry("c", false, "target-1")).rejects.toThrow(/may hold 1 RabbitMQVhost orders/);
    kube.failNext("get", namespaceKind, apiError(403, "Forbidden"));
    await expect(entry("c")).rejects.toThrow(/Forbidden/);
    await expect(configure(orderQuota, kube, { VHOST_BROKER_ORDER_QUOTA: "two" })).rejects.toThrow(
      'VHOST_BROKER_ORDER_QUOTA "two" is not a whole number',
    );
  });
});

describe("rotation-policy", () => {
  it("reads its bounds and refuses a malformed or inverted one", () => {
    expect(boundsFrom({ VHOST_BROKER_ROTATION_POLICY_MAX_INTERVAL: "20s" })).toEqual({
      minInterval: undefined,
      maxInterval: 20_000,
      minGrace: undefined,
      maxGrace: undefined,
    });
    expect(() => boundsFrom({ VHOST_BROKER_ROTATION_POLICY_MIN_INTERVAL: "soon" })).toThrow(
      /is not a duration/,
    );
    expect(() =>
      boundsFrom({
        VHOST_BROKER_ROTATION_POLICY_MIN_INTERVAL: "2h",
        VHOST_BROKER_ROTATION_POLICY_MAX_INTERVAL: "1h",
      }),
    ).toThrow(/minimum interval exceeds the maximum/);
  });

  it("clamps into the bounds, takes the CRD's defaults for absent fields, and leaves what fits", () => {
    const bounds = { minInterval: 3_600_000, maxInterval: 20_000_000, minGrace: 60_000, maxGrace: 600_000 };
    expect(
      applyPolicy({ interval: "8760h", gracePeriod: "1s" }, { maxInterval: 20_000, minGrace: 1000 }),
    ).toEqual({
      interval: "20s",
      gracePeriod: "1s",
      changes: ["interval 8760h is 20s"],
    });
    expect(applyPolicy(undefined, bounds).changes).toEqual([
      "interval 720h is 20000s",
      "gracePeriod 24h is 10m",
    ]);
    expect(applyPolicy({ interval: "2h", gracePeriod: "5m" }, bounds).changes).toEqual([]);
    expect(applyPolicy({ interval: "0s" }, {}).changes).toEqual([]);
    expect(applyPolicy({ interval: "0s", gracePeriod: "1m" }, { maxInterval: 86_400_000 }).interval).toBe(
      "24h",
    );
    expect(applyPolicy({ interval: "1m" }, bounds).interval).toBe("1h");
    expect(formatDuration(1500)).toBe("1500ms");
  });

  it("clamps a MariaDBDatabase's schedule for the pass and says so at exit, as a RabbitMQVhost's", async () => {
    await configure(rotationPolicy, new FakeKube(), { VHOST_BROKER_ROTATION_POLICY_MAX_INTERVAL: "1h" });
    const hooks = rotationPolicy.mutating?.MariaDBDatabase;
    const database = {
      metadata: { name: "d", namespace: "t", generation: 3 },
      spec: { controlPlaneRef: { name: "cp" }, rotation: { interval: "720h", gracePeriod: "5m" } },
    };
    const passContext = { ...context(new FakeKube()), kind: "MariaDBDatabase" as const };
    const forPass = await hooks?.entry?.(passContext, database);
    expect(forPass?.spec.rotation).toEqual({ interval: "1h", gracePeriod: "5m" });
    expect(database.spec.rotation.interval).toBe("720h");
    const status = await hooks?.exit?.({ ...passContext, outcome: "succeeded" }, database, {
      conditions: [],
    });
    expect(status?.conditions).toEqual([
      {
        type: "RotationPolicyApplied",
        status: "True",
        reason: "Clamped",
        message: "the platform's rotation policy applies to this order: interval 720h is 1h",
        observedGeneration: 3,
        lastTransitionTime: "1970-01-01T00:00:00Z",
      },
    ]);
  });
});

it("log-resource logs the object at entry with secrets redacted and no managedFields", async () => {
  const log = new RecordingLog();
  const object = {
    metadata: {
      name: "u",
      namespace: "t",
      managedFields: [{ manager: "kubectl" }],
      annotations: { note: "amqp://admin:hunter2@broker:5672/" },
    },
    spec: { importCredentialsSecret: { name: "creds" }, rabbitmqClusterReference: { name: "rmq" } },
  };
  await logResource.validating?.User?.entry?.(
    { ...context(new FakeKube(), log), kind: "User" },
    object as never,
  );
  expect(log.lines).toHaveLength(1);
  const line = JSON.stringify(log.lines[0]);
  expect(line).toContain("User t/u at the entry of its pass");
  expect(line).toContain('"rmq"');
  expect(line).not.toContain("hunter2");
  expect(line).not.toContain("managedFields");
  expect(Object.keys(logResource.validating ?? {}).sort()).toEqual([
    "Binding",
    "Connection.mariadb.osh.openstack.org",
    "Database.mariadb.osh.openstack.org",
    "Exchange",
    "Grant.mariadb.osh.openstack.org",
    "MariaDBDatabase",
    "Permission",
    "Policy",
    "Queue",
    "RabbitMQVhost",
    "User",
    "User.mariadb.osh.openstack.org",
    "Vhost",
  ]);
});
