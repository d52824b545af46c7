// The shipped plugins on their own: order-quota's count (annotation, setting, existing orders never
// refused, the children a tenant cannot forge as evidence, two passes racing for the last place),
// rotation-policy's bounds and clamp, log-resource's redacted line.
import { beforeEach, describe, expect, it } from "vitest";
import {
  MARIADBDATABASE_CHILD_PREFIX,
  orderChildKeys,
  RABBITMQVHOST_CHILD_PREFIX,
} from "../../src/api/contracts.ts";
import { mariaDBDatabaseKind, rabbitMQVhostKind, sqlDatabaseKind, vhostKind } from "../../src/api/index.ts";
import type { EntryContext, GatekeeperPlugin } from "../../src/gatekeeper/api.ts";
import logResource from "../../src/gatekeeper/plugins/log-resource.ts";
import orderQuota, {
  admittedBefore,
  childSelector,
  evidenceOf,
  QUOTA_ANNOTATION,
} from "../../src/gatekeeper/plugins/order-quota.ts";
import { labelKeys } from "../../src/orders/core/naming.ts";
import { RABBITMQ_NAMING } from "../../src/orders/rabbitmq/naming.ts";
import { selectorCovers } from "../../src/runtime/base/selector.ts";
import rotationPolicy, {
  applyPolicy,
  boundsFrom,
  formatDuration,
} from "../../src/gatekeeper/plugins/rotation-policy.ts";
import { apiError, FakeKube } from "../../harness/fakes/fake-kube.ts";
import { RecordingLog } from "./support.ts";

const namespaceKind = {
  group: "",
  version: "v1",
  kind: "Namespace",
  plural: "namespaces",
  namespaced: false,
};
const FINALIZER = "c5c3.io/rabbitmqvhost-teardown";
const VHOST_KEYS = orderChildKeys(RABBITMQVHOST_CHILD_PREFIX);
const DATABASE_KEYS = orderChildKeys(MARIADBDATABASE_CHILD_PREFIX);

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
  management: kube,
  log,
  clock: { now: () => 0 },
  teardown,
});

describe("order-quota's evidence", () => {
  const child = (name: string, uid?: string) => ({
    metadata: {
      name: `${name}-0123abcd-vhost`,
      labels: { [VHOST_KEYS.name]: name },
      ...(uid === undefined ? {} : { annotations: { [VHOST_KEYS.uid]: uid } }),
    },
  });

  it("selects the container children of one namespace's orders, through the orders' own watch", () => {
    expect(childSelector(VHOST_KEYS, "", "tenant-a")).toBe(
      "c5c3.io/rabbitmqvhost-name,c5c3.io/rabbitmqvhost-namespace=tenant-a,c5c3.io/rabbitmqvhost-cluster=",
    );
    // The orders watch their children by the name label: their cache answers this list.
    expect(selectorCovers(labelKeys(RABBITMQ_NAMING).name, childSelector(VHOST_KEYS, "edge-1", "t"))).toBe(
      true,
    );
  });

  it("admits an order its child names by uid, or by name where the child records no uid; a status is none", () => {
    const evidence = evidenceOf(
      [child("a", "uid-a"), child("legacy"), child("again", "uid-earlier")],
      VHOST_KEYS,
    );
    const order = (name: string, uid: string) => ({
      metadata: { name, uid },
      status: { conditions: [{ type: "VhostReady", status: "True", reason: "Provisioned" }] },
    });
    expect(admittedBefore(order("a", "uid-a"), new Set(), evidence)).toBe(true);
    expect(admittedBefore(order("legacy", "uid-legacy"), new Set(), evidence)).toBe(true);
    // The child of an earlier order of the same name (a Retain deletion's) is not this order's.
    expect(admittedBefore(order("again", "uid-again"), new Set(), evidence)).toBe(false);
    expect(admittedBefore(order("forged", "uid-forged"), new Set(), evidence)).toBe(false);
    expect(admittedBefore(order("forged", "uid-forged"), new Set(["uid-forged"]), evidence)).toBe(true);
  });
});

describe("order-quota", () => {
  let kube: FakeKube;
  let management: FakeKube;
  const entry = (name: string, teardown = false, cluster = "") => {
    const o = kube.read(rabbitMQVhostKind, "t", name);
    return orderQuota.validating?.RabbitMQVhost?.entry?.(
      { ...context(kube, new RecordingLog(), teardown), management, cluster },
      o as never,
    );
  };
  /** An order; `status` is what its status says (a tenant may have written it), `finalizers` its own. */
  const put = (name: string, options: { forged?: boolean; finalizers?: string[] } = {}) =>
    kube.put(rabbitMQVhostKind, {
      metadata: {
        name,
        namespace: "t",
        uid: `uid-${name}-${Math.random()}`,
        finalizers: options.finalizers ?? [],
      },
      spec: { controlPlaneRef: { name: "cp" } },
      ...(options.forged
        ? {
            status: {
              conditions: [{ type: "VhostReady", status: "True", reason: "Provisioned", message: "" }],
            },
          }
        : {}),
    });
  /** The order's Vhost CR in the ControlPlane's namespace, as the operator makes it. */
  const provision = (
    name: string,
    cluster = "",
    uid = kube.read(rabbitMQVhostKind, "t", name)?.metadata?.uid,
  ) =>
    management.put(vhostKind, {
      metadata: {
        name: `${name}-0123abcd-vhost`,
        namespace: "openstack",
        labels: { [VHOST_KEYS.name]: name, [VHOST_KEYS.namespace]: "t", [VHOST_KEYS.cluster]: cluster },
        annotations: { [VHOST_KEYS.uid]: uid ?? "" },
      },
    });
  const annotate = (quota: string | undefined) =>
    kube.put(namespaceKind, {
      metadata: { name: "t", ...(quota === undefined ? {} : { annotations: { [QUOTA_ANNOTATION]: quota } }) },
    });

  beforeEach(async () => {
    kube = new FakeKube();
    management = new FakeKube();
    await configure(orderQuota, kube);
  });

  it("refuses a new order beyond the namespace's annotation, and never an existing one", async () => {
    annotate("2");
    put("a");
    provision("a");
    put("b");
    await expect(entry("b")).resolves.toBeUndefined();
    put("c");
    await expect(entry("c")).rejects.toThrow(
      `namespace t may hold 2 RabbitMQVhost orders and holds 2: this new order is not provisioned until one is deleted or the quota (annotation ${QUOTA_ANNOTATION}) is raised`,
    );
    // Lowered below what exists: the existing orders go on.
    annotate("1");
    await expect(entry("a")).resolves.toBeUndefined();
    await expect(entry("b")).resolves.toBeUndefined();
    // A teardown is never refused.
    await expect(entry("c", true)).resolves.toBeUndefined();
    // Once one is gone, a new one fits.
    annotate("2");
    kube.remove(rabbitMQVhostKind, "t", "a");
    await expect(entry("c")).resolves.toBeUndefined();
  });

  it("counts from the children on the management cluster, not from a status or finalizer the tenant wrote", async () => {
    annotate("1");
    put("a");
    provision("a");
    put("forged", { forged: true, finalizers: [FINALIZER] });
    await expect(entry("forged")).rejects.toThrow(/may hold 1 RabbitMQVhost orders and holds 1/);
    // A child an earlier order of that name left (a Retain deletion's) is not this one's.
    provision("forged", "", "uid-of-an-earlier-order");
    await expect(entry("forged")).rejects.toThrow(/may hold 1 RabbitMQVhost orders and holds 1/);
    // Nor is the child of the same name on another cluster.
    put("elsewhere", { forged: true });
    provision("elsewhere", "edge-1");
    await expect(entry("elsewhere")).rejects.toThrow(/may hold 1 RabbitMQVhost orders and holds 1/);
    // With room for two, one of them gets it, the other still waits.
    annotate("2");
    await expect(entry("forged")).resolves.toBeUndefined();
    await expect(entry("elsewhere")).rejects.toThrow(/may hold 2 RabbitMQVhost orders and holds 2/);
  });

  it("counts an admitted order whose status the tenant cleared, in a process that did not admit it", async () => {
    annotate("1");
    put("a");
    provision("a");
    put("b");
    await expect(entry("b")).rejects.toThrow(/may hold 1 RabbitMQVhost orders and holds 1/);
    // On a target cluster, the children carry its name.
    put("remote");
    provision("remote", "edge-1");
    kube.failNext("get", namespaceKind, apiError(403, "Forbidden"));
    await expect(entry("remote", false, "edge-1")).resolves.toBeUndefined();
  });

  it("gives the last place to one of two passes running at once", async () => {
    annotate("1");
    put("x");
    put("y");
    const outcomes = await Promise.allSettled([entry("x"), entry("y")]);
    expect(outcomes.map((o) => o.status).sort()).toEqual(["fulfilled", "rejected"]);
  });

  it("counts MariaDBDatabase orders on their own, admitted by their Database CR", async () => {
    annotate("1");
    put("a");
    provision("a");
    const database = (name: string, child?: "database" | "vhost") => {
      const uid = `uid-${name}-${Math.random()}`;
      kube.put(mariaDBDatabaseKind, {
        metadata: { name, namespace: "t", uid },
        spec: { controlPlaneRef: { name: "cp" } },
      });
      const keys = child === "vhost" ? VHOST_KEYS : DATABASE_KEYS;
      if (child)
        management.put(child === "vhost" ? vhostKind : sqlDatabaseKind, {
          metadata: {
            name: `${name}-0123abcd-db-database`,
            namespace: "openstack",
            labels: { [keys.name]: name, [keys.namespace]: "t", [keys.cluster]: "" },
            annotations: { [keys.uid]: uid },
          },
        });
    };
    const enter = (name: string) =>
      orderQuota.validating?.MariaDBDatabase?.entry?.(
        { ...context(kube), management, kind: "MariaDBDatabase" },
        kube.read(mariaDBDatabaseKind, "t", name) as never,
      );
    // The RabbitMQVhost takes no place of the databases'.
    database("d1", "database");
    database("d2");
    await expect(enter("d1")).resolves.toBeUndefined();
    await expect(enter("d2")).rejects.toThrow(
      `namespace t may hold 1 MariaDBDatabase orders and holds 1: this new order is not provisioned until one is deleted or the quota (annotation ${QUOTA_ANNOTATION}) is raised`,
    );
    // A Vhost CR naming a database is no evidence: only its own kind's container is.
    kube.remove(mariaDBDatabaseKind, "t", "d1");
    database("d3", "vhost");
    await expect(enter("d2")).resolves.toBeUndefined();
    await expect(enter("d3")).rejects.toThrow(/may hold 1 MariaDBDatabase orders and holds 1/);
    // Where the management cluster serves no Database kind, no order has one.
    management.notServed(sqlDatabaseKind);
    await expect(enter("d3")).rejects.toThrow(/may hold 1 MariaDBDatabase orders and holds 1/);
  });

  it("takes the setting where the namespace has no annotation, or may not be read; none means no limit", async () => {
    annotate(undefined);
    put("a");
    provision("a");
    put("b");
    await expect(entry("b")).resolves.toBeUndefined();
    await configure(orderQuota, kube, { VHOST_BROKER_ORDER_QUOTA: "1" });
    put("c");
    await expect(entry("c")).rejects.toThrow(/may hold 1 RabbitMQVhost orders/);
    // A target cluster's chart grants no namespace read; the management cluster's does.
    provision("b", "target-1");
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
