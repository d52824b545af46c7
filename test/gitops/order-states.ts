// Real orders of both kinds on the local environment, driven into every state a GitOps tool meets, and
// read back from the API server as those tools read them. No operator process: the order reconciler
// runs pass by pass in this process (as harness/operator/order-driver.ts does), the topology stand-in serves
// the rabbitmq.com children on the local broker and the built-in SQL controller's reconcilers serve the
// mariadb.osh.openstack.org children on the local MariaDB. Between passes nothing else acts, so a state
// in the middle of a rotation or a teardown is held while it is read.
import { randomBytes } from "node:crypto";
import * as k8s from "@kubernetes/client-node";
import { createManagedBus, installCrds, localBrokerFromEnv } from "../../harness/world/managed-bus.ts";
import { holdOperatorLock, releaseOperatorLock } from "../../harness/operator/operator-process.ts";
import { OrderDriver } from "../../harness/operator/order-driver.ts";
import { broker, TopologyStandIn } from "../../harness/world/topology-stand-in.ts";
import {
  controlPlaneKind,
  mariaDBDatabaseKind,
  mariaDBKind,
  rabbitMQVhostKind,
  sqlDatabaseKind,
  vhostKind,
  type KindRef,
} from "../../src/api/index.ts";
import { Gatekeeper } from "../../src/gatekeeper/gatekeeper.ts";
import { GATEKEEPER_API_VERSION, type GatekeeperPlugin } from "../../src/gatekeeper/api.ts";
import type { OrderDeps } from "../../src/orders/core/deps.ts";
import type { Backend, OrderKind } from "../../src/orders/core/kind.ts";
import { reconcileOrder } from "../../src/orders/core/reconcile.ts";
import { mariaDBDatabaseOrder } from "../../src/orders/mariadb/kind.ts";
import { databaseChildName, userName as mariaDBUserName } from "../../src/orders/mariadb/naming.ts";
import { rabbitMQVhostOrder } from "../../src/orders/rabbitmq/kind.ts";
import { userName as rabbitMQUserName, vhostChildName, vhostName } from "../../src/orders/rabbitmq/naming.ts";
import { TerminalError, TransientError } from "../../src/runtime/base/errors.ts";
import { realClock } from "../../src/runtime/base/clock.ts";
import { KubeRest } from "../../src/runtime/port/kube-rest.ts";
import { RestKube } from "../../src/runtime/port/rest-kube.ts";
import { reconcileExternal } from "../../src/external/index.ts";
import { sqlControllerKinds } from "../../src/sql/backend.ts";
import { createSharedSqlDeps, sqlReconcileDeps, type SqlDeps } from "../../src/sql/deps.ts";
import type { SqlServer } from "../../src/sql/statements/index.ts";
import { adminServer } from "../../harness/world/sql.ts";
import { localEnv } from "../../harness/world/env.ts";
import { freshNamespace, isApiError, testCluster, type TestCluster } from "../../harness/world/kube.ts";

/** An order as the API server returns it. */
export interface OrderObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace: string;
    generation?: number;
    deletionTimestamp?: string;
    finalizers?: string[];
  };
  spec: Record<string, unknown>;
  status?: {
    observedGeneration?: number;
    passwordGeneration?: number;
    previousPasswordGeneration?: number;
    conditions?: { type: string; status: string; reason: string; message: string }[];
    [field: string]: unknown;
  };
}

export const condition = (o: OrderObject | undefined, type: string) =>
  o?.status?.conditions?.find((c) => c.type === type);

/**
 * The states, each on an order of its own:
 * - `new`: created, no pass yet (no status);
 * - `provisioning`: the resource condition waits for its vhost or database;
 * - `ready`: Ready True;
 * - `rotation-requested`: spec.passwordGeneration raised, no pass since (observedGeneration behind);
 * - `rotating`: the pass after it: the successor is being created, the Secret still carries the old one;
 * - `grace`: switched to the successor, the old one valid until status.previousPasswordDeleteAt;
 * - `rotation-held`: spec.passwordGeneration raised again during that grace period, a pass since: the
 *   rotation waits for the sweep (an order never holds more than two users);
 * - `rejected`: a gatekeeper plugin refuses the order at entry;
 * - `controlplane-missing`: spec.controlPlaneRef names no ControlPlane;
 * - `unassigned`: its ControlPlane assigns no namespace of this name (the order is frozen);
 * - `not-declared`: its ControlPlane declares no bus (no database) for the kind;
 * - `refused`: the topology or SQL operator reports the vhost or database refused;
 * - `deleting`: deleted, its teardown held by a child that is still being removed.
 */
export const STATES = [
  "new",
  "provisioning",
  "ready",
  "rotation-requested",
  "rotating",
  "grace",
  "rotation-held",
  "rejected",
  "controlplane-missing",
  "unassigned",
  "not-declared",
  "refused",
  "deleting",
] as const;
export type StateName = (typeof STATES)[number];

export const KIND_NAMES = ["RabbitMQVhost", "MariaDBDatabase"] as const;
export type KindName = (typeof KIND_NAMES)[number];

interface KindOps {
  ref: KindRef;
  order: OrderKind<Backend>;
  /** Extra spec fields of an order named `name` (a MariaDBDatabase's unique database name). */
  spec(name: string): Record<string, unknown>;
  /** Makes the backend's operator report the container child refused. */
  refuse(states: OrderStates, name: string): Promise<void>;
  /** The reason of the resource condition while it waits for the container child. */
  waiting: string;
}

const mergePatch = k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch);
const ssa = k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.ServerSideApply);
const group = (kind: KindRef) => ({ group: kind.group, version: kind.version, plural: kind.plural });

/** A gatekeeper plugin that refuses every order at entry, as a maintenance freeze would. */
const freeze: GatekeeperPlugin = {
  apiVersion: GATEKEEPER_API_VERSION,
  name: "maintenance-freeze",
  validating: {
    RabbitMQVhost: {
      entry() {
        throw new Error("no new orders during the maintenance window");
      },
    },
    MariaDBDatabase: {
      entry() {
        throw new Error("no new orders during the maintenance window");
      },
    },
  },
};

export class OrderStates {
  readonly cluster: TestCluster;
  readonly custom: k8s.CustomObjectsApi;
  readonly tag = randomBytes(3).toString("hex");
  cpNs = "";
  tenantNs = "";
  /** A namespace the ControlPlane does not assign. */
  strayNs = "";
  private driver: OrderDriver | undefined;
  private sqlServer: SqlServer | undefined;
  private sql: SqlDeps | undefined;
  /** Every order created, for the clean-up. */
  private readonly made: { kind: KindName; namespace: string; name: string }[] = [];
  /** The captured objects, by kind and state. */
  readonly objects = new Map<KindName, Map<StateName, OrderObject>>();

  private readonly kinds: Record<KindName, KindOps> = {
    RabbitMQVhost: {
      ref: rabbitMQVhostKind,
      order: rabbitMQVhostOrder() as OrderKind<Backend>,
      spec: () => ({}),
      waiting: "WaitingForVhost",
      refuse: async (states, name) => {
        const child = vhostChildName({ cluster: "", namespace: states.tenantNs, name });
        await states.refuseChild(vhostKind, child, (generation) => ({
          observedGeneration: generation,
          conditions: [
            {
              type: "Ready",
              status: "False",
              reason: "FailedCreateOrUpdate",
              message: "Error: API responded with a 400 Bad Request: vhost limit of 1 reached",
              lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
            },
          ],
        }));
      },
    },
    MariaDBDatabase: {
      ref: mariaDBDatabaseKind,
      order: mariaDBDatabaseOrder() as unknown as OrderKind<Backend>,
      spec: (name) => ({ databaseName: this.databaseOf(name) }),
      waiting: "WaitingForSchema",
      refuse: async (states, name) => {
        const child = databaseChildName({ cluster: "", namespace: states.tenantNs, name });
        await states.refuseChild(sqlDatabaseKind, child, (generation) => ({
          conditions: [
            {
              type: "Ready",
              status: "False",
              reason: "ReconcileError",
              message: "Error 1044 (42000): Access denied for user to database",
              observedGeneration: generation,
              lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
            },
          ],
        }));
      },
    },
  };

  constructor() {
    this.cluster = testCluster("management");
    this.custom = this.cluster.config.makeApiClient(k8s.CustomObjectsApi);
  }

  private get deps(): OrderDeps {
    if (!this.driver) throw new Error("set up first");
    return this.driver.deps;
  }

  /** The database of a MariaDBDatabase order: unique per run, since the server is shared. */
  databaseOf(name: string): string {
    return `gitops_${this.tag}_${name.replaceAll("-", "_")}`;
  }

  /** The CRDs, a ControlPlane `cp` with a managed bus and a managed MariaDB, and `bare` with neither. */
  async setUp(prefix: string): Promise<void> {
    // The passes run here: an operator another test file runs on the machine must not serve these orders.
    await holdOperatorLock();
    const env = localEnv();
    await installCrds(this.cluster.config);
    this.cpNs = await freshNamespace(this.cluster, `${prefix}-cp`);
    this.tenantNs = await freshNamespace(this.cluster, `${prefix}-tenant`);
    this.strayNs = await freshNamespace(this.cluster, `${prefix}-stray`);
    await createManagedBus(
      this.cluster.config,
      this.cpNs,
      localBrokerFromEnv(env as unknown as NodeJS.ProcessEnv),
    );
    await this.cluster.core.createNamespacedSecret({
      namespace: this.cpNs,
      body: {
        metadata: { name: "mariadb-admin" },
        stringData: {
          username: env.MARIADB_ADMIN_USERNAME,
          password: env.MARIADB_ADMIN_PASSWORD,
          host: env.MARIADB_HOST,
          port: String(env.MARIADB_PORT),
        },
      },
    });
    await this.apply(mariaDBKind, this.cpNs, "mariadb", { spec: {} });
    await this.custom.patchNamespacedCustomObjectStatus(
      {
        ...group(mariaDBKind),
        namespace: this.cpNs,
        name: "mariadb",
        body: {
          status: { conditions: [{ type: "Ready", status: "True", reason: "Ready", message: "local" }] },
        },
      },
      mergePatch,
    );
    const assignments = [{ namespace: this.tenantNs }];
    await this.apply(controlPlaneKind, this.cpNs, "cp", {
      spec: {
        namespaceAssignments: assignments,
        infrastructure: {
          messaging: { clusterRef: { name: "rabbitmq" } },
          database: { clusterRef: { name: "mariadb" }, secretRef: { name: "mariadb-admin" } },
        },
      },
    });
    await this.apply(controlPlaneKind, this.cpNs, "bare", {
      spec: { namespaceAssignments: assignments, infrastructure: {} },
    });
    this.driver = new OrderDriver(this.cluster, new TopologyStandIn(this.cluster, this.cpNs));
    this.sqlServer = adminServer();
    const kube = new RestKube(new KubeRest(this.cluster.kubeconfig));
    this.sql = sqlReconcileDeps(
      createSharedSqlDeps({ server: this.sqlServer, refs: { serve: "all" } }),
      kube,
      this.deps.log,
    );
  }

  private async apply(kind: KindRef, namespace: string, name: string, body: Record<string, unknown>) {
    await this.custom.patchNamespacedCustomObject(
      {
        ...group(kind),
        namespace,
        name,
        body: { apiVersion: kind.apiVersion, kind: kind.kind, metadata: { name, namespace }, ...body },
        fieldManager: "gitops-tests",
        force: true,
      },
      ssa,
    );
  }

  /** Creates (or changes) an order: the ControlPlane `cp` unless told, deletion policy Delete, no schedule. */
  async order(
    kind: KindName,
    name: string,
    options: { namespace?: string; controlPlane?: string; spec?: Record<string, unknown> } = {},
  ): Promise<void> {
    const namespace = options.namespace ?? this.tenantNs;
    if (!this.made.some((m) => m.kind === kind && m.namespace === namespace && m.name === name))
      this.made.push({ kind, namespace, name });
    await this.apply(this.kinds[kind].ref, namespace, name, {
      spec: {
        controlPlaneRef: { name: options.controlPlane ?? "cp", namespace: this.cpNs },
        deletionPolicy: "Delete",
        rotation: { interval: "0s", gracePeriod: "10m" },
        ...this.kinds[kind].spec(name),
        ...options.spec,
      },
    });
  }

  /** The order as the API server returns it; undefined once it is gone. */
  async read(kind: KindName, name: string, namespace = this.tenantNs): Promise<OrderObject | undefined> {
    try {
      return (await this.custom.getNamespacedCustomObject({
        ...group(this.kinds[kind].ref),
        namespace,
        name,
      })) as OrderObject;
    } catch (error) {
      if (isApiError(error, 404)) return undefined;
      throw error;
    }
  }

  /** One pass of the order's reconciler; a transient or terminal failure is what the runtime would retry. */
  async pass(kind: KindName, name: string, options: { namespace?: string; deps?: OrderDeps } = {}) {
    try {
      await reconcileOrder(
        this.kinds[kind].order,
        options.deps ?? this.deps,
        "",
        options.namespace ?? this.tenantNs,
        name,
      );
    } catch (error) {
      if (!(error instanceof TransientError) && !(error instanceof TerminalError)) throw error;
    }
  }

  /** One round of both backends' operators over every child in the ControlPlane's namespace. */
  async serveChildren(): Promise<void> {
    await this.driver?.standIn.step();
    const sql = this.sql;
    if (!sql) return;
    for (const entry of sqlControllerKinds) {
      const list = (await this.custom.listNamespacedCustomObject({
        ...group(entry.kind),
        namespace: this.cpNs,
      })) as { items: { metadata: { name: string } }[] };
      for (const item of list.items) {
        await reconcileExternal(entry, sql, this.cpNs, item.metadata.name).catch(() => undefined);
      }
    }
  }

  /** Passes, each followed by a round of the backends, until `done` holds for the order as read. */
  async until(
    kind: KindName,
    name: string,
    what: string,
    done: (o: OrderObject | undefined) => boolean,
    options: { namespace?: string; serve?: boolean; timeoutMs?: number; deps?: OrderDeps } = {},
  ): Promise<OrderObject | undefined> {
    const deadline = Date.now() + (options.timeoutMs ?? 60_000);
    for (;;) {
      await this.pass(kind, name, options);
      if (options.serve !== false) await this.serveChildren();
      const o = await this.read(kind, name, options.namespace);
      if (done(o)) return o;
      if (Date.now() > deadline) {
        const conditions = JSON.stringify(o?.status?.conditions?.map((c) => [c.type, c.reason, c.message]));
        throw new Error(`${kind} ${name}: timed out waiting for ${what}; conditions: ${conditions}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  private async refuseChild(
    kind: KindRef,
    name: string,
    status: (generation: number) => Record<string, unknown>,
  ): Promise<void> {
    const child = (await this.custom.getNamespacedCustomObject({
      ...group(kind),
      namespace: this.cpNs,
      name,
    })) as { metadata: { generation: number } };
    await this.custom.patchNamespacedCustomObjectStatus(
      {
        ...group(kind),
        namespace: this.cpNs,
        name,
        body: { status: status(child.metadata.generation) },
      },
      mergePatch,
    );
  }

  private keep(kind: KindName, state: StateName, o: OrderObject | undefined): void {
    if (!o) throw new Error(`${kind} in state ${state} is gone`);
    let byState = this.objects.get(kind);
    if (!byState) this.objects.set(kind, (byState = new Map()));
    byState.set(state, structuredClone(o));
  }

  /** The captured order of `kind` in `state`. */
  object(kind: KindName, state: StateName): OrderObject {
    const o = this.objects.get(kind)?.get(state);
    if (!o) throw new Error(`no ${kind} was captured in state ${state}`);
    return o;
  }

  /** Drives an order of each kind into each state and keeps what the API server returns then. */
  async capture(): Promise<void> {
    for (const kind of KIND_NAMES) await this.captureKind(kind);
  }

  private async captureKind(kind: KindName): Promise<void> {
    const ops = this.kinds[kind];
    const hasReason = (type: string, reason: string) => (o: OrderObject | undefined) =>
      condition(o, type)?.reason === reason;
    const isReady = (o: OrderObject | undefined) => condition(o, "Ready")?.status === "True";
    const resourceType = kind === "RabbitMQVhost" ? "VhostReady" : "DatabaseReady";
    const short = kind === "RabbitMQVhost" ? "r" : "m";

    // new, then provisioning: the passes without a round of the backend's operator.
    const fresh = `${short}-fresh`;
    await this.order(kind, fresh);
    this.keep(kind, "new", await this.read(kind, fresh));
    const provisioning = `${short}-provisioning`;
    await this.order(kind, provisioning);
    this.keep(
      kind,
      "provisioning",
      await this.until(kind, provisioning, ops.waiting, hasReason(resourceType, ops.waiting), {
        serve: false,
      }),
    );

    // ready, then a rotation the spec asks for: before its first pass, after it, and switched.
    const rotated = `${short}-rotated`;
    await this.order(kind, rotated);
    this.keep(kind, "ready", await this.until(kind, rotated, "Ready", isReady));
    await this.order(kind, rotated, { spec: { passwordGeneration: 2 } });
    this.keep(kind, "rotation-requested", await this.read(kind, rotated));
    await this.pass(kind, rotated);
    this.keep(kind, "rotating", await this.read(kind, rotated));
    this.keep(
      kind,
      "grace",
      await this.until(
        kind,
        rotated,
        "the switch to generation 2",
        (o) => isReady(o) && o?.status?.passwordGeneration === 2,
      ),
    );
    await this.order(kind, rotated, { spec: { passwordGeneration: 3 } });
    await this.pass(kind, rotated);
    this.keep(kind, "rotation-held", await this.read(kind, rotated));

    // Refusals a person has to act on.
    const rejected = `${short}-rejected`;
    await this.order(kind, rejected);
    const gatekeeper = new Gatekeeper({
      plugins: { mandatory: [], default: [], custom: [freeze] },
      log: this.deps.log,
      clock: realClock,
    });
    this.keep(
      kind,
      "rejected",
      await this.until(kind, rejected, "GatekeeperRejected", hasReason("Ready", "GatekeeperRejected"), {
        serve: false,
        deps: { ...this.deps, gatekeeper },
      }),
    );
    const missing = `${short}-no-cp`;
    await this.order(kind, missing, { controlPlane: "missing" });
    this.keep(
      kind,
      "controlplane-missing",
      await this.until(
        kind,
        missing,
        "ControlPlaneNotFound",
        hasReason(resourceType, "ControlPlaneNotFound"),
      ),
    );
    const stray = `${short}-stray`;
    await this.order(kind, stray, { namespace: this.strayNs });
    this.keep(
      kind,
      "unassigned",
      await this.until(kind, stray, "NamespaceNotAssigned", hasReason(resourceType, "NamespaceNotAssigned"), {
        namespace: this.strayNs,
      }),
    );
    const bare = `${short}-bare`;
    const notDeclared = kind === "RabbitMQVhost" ? "MessagingNotDeclared" : "DatabaseNotDeclared";
    await this.order(kind, bare, { controlPlane: "bare" });
    this.keep(
      kind,
      "not-declared",
      await this.until(kind, bare, notDeclared, hasReason(resourceType, notDeclared)),
    );
    const refused = `${short}-refused`;
    const failed = kind === "RabbitMQVhost" ? "VhostFailed" : "DatabaseFailed";
    await this.order(kind, refused);
    await this.until(kind, refused, ops.waiting, hasReason(resourceType, ops.waiting), { serve: false });
    await ops.refuse(this, refused);
    this.keep(
      kind,
      "refused",
      await this.until(kind, refused, failed, hasReason(resourceType, failed), { serve: false }),
    );

    // deleting: the teardown waits for a child that its operator has not removed yet.
    const deleted = `${short}-deleted`;
    await this.order(kind, deleted);
    await this.until(kind, deleted, "Ready", isReady);
    await this.custom.deleteNamespacedCustomObject({
      ...group(ops.ref),
      namespace: this.tenantNs,
      name: deleted,
    });
    this.keep(
      kind,
      "deleting",
      await this.until(kind, deleted, "a held teardown", hasReason("Ready", "Deleting"), { serve: false }),
    );
  }

  /** Every order deleted and torn down (finalizers stripped where that does not finish), then the rest. */
  async tearDown(): Promise<void> {
    for (const { kind, namespace, name } of this.made) {
      const ops = this.kinds[kind];
      await this.custom
        .deleteNamespacedCustomObject({ ...group(ops.ref), namespace, name })
        .catch(() => undefined);
      await this.until(kind, name, "the order to be gone", (o) => o === undefined, {
        namespace,
        timeoutMs: 30_000,
      }).catch(async () => {
        await this.custom
          .patchNamespacedCustomObject(
            { ...group(ops.ref), namespace, name, body: { metadata: { finalizers: null } } },
            mergePatch,
          )
          .catch(() => undefined);
      });
      if (kind === "RabbitMQVhost") {
        const order = { cluster: "", namespace, name };
        await broker("DELETE", `/api/vhosts/${encodeURIComponent(vhostName(order))}`);
        // The stand-in names a broker user by its password Secret, which the teardown may delete first.
        for (const generation of [1, 2, 3])
          await broker("DELETE", `/api/users/${encodeURIComponent(rabbitMQUserName(order, generation))}`);
      } else {
        await this.sqlServer
          ?.run(`DROP DATABASE IF EXISTS \`${this.databaseOf(name)}\``)
          .catch(() => undefined);
        for (const generation of [1, 2, 3]) {
          const account = mariaDBUserName({ cluster: "", namespace, name }, generation);
          await this.sqlServer?.run(`DROP USER IF EXISTS '${account}'@'%'`).catch(() => undefined);
        }
      }
    }
    await this.sqlServer?.close();
    for (const ns of [this.tenantNs, this.strayNs, this.cpNs]) {
      if (ns) await this.cluster.core.deleteNamespace({ name: ns }).catch(() => undefined);
    }
    releaseOperatorLock();
  }
}
