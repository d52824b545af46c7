// The MariaDBDatabase order kind: what the order core needs to know of the MariaDB leg. Seed 001's
// pattern in a database's words; the backend is the ControlPlane's managed MariaDB; the container child
// is seed 002's Database and each password generation a password Secret, a User and a Grant; the
// successor logs in over SQL before a switch; the delivered Secret carries a mysql+pymysql connection.
import {
  mariaDBDatabaseKind,
  MariaDBDatabaseSchema,
  mariaDBKind,
  sqlDatabaseKind,
  sqlGrantKind,
  sqlUserKind,
} from "../../api/index.ts";
import { defaultTransport, trustedCa, type MariaDBTransport } from "../../mariadb/client.ts";
import type { KubeObject } from "../../runtime/port/kube-rest.ts";
import type { WriteFence } from "../../runtime/base/write-fence.ts";
import type { OrderKind } from "../core/kind.ts";
import type { OrderKey } from "../core/naming.ts";
import { parseOrder } from "../core/order-schema.ts";
import {
  applyDatabase,
  cleanupPolicy,
  listGenerations,
  performAction,
  pickDatabaseSpec,
  sqlReadiness,
} from "./children.ts";
import { DATABASE_READY, eventTypes, messages, Reason, viewWords } from "./conditions.ts";
import { DEFAULT_TENANT_TLS_DIR, DELIVERED_KEYS, deliveredData } from "./delivered-data.ts";
import { serverConnections } from "./connections.ts";
import { serverLogins } from "./logins.ts";
import {
  databaseChildName,
  databaseName,
  legacyAccounts,
  MARIADB_NAMING,
  provisionedDatabase,
  userName,
  userNamePrefix,
} from "./naming.ts";
import { databaseSettled } from "./database-settled.ts";
import { managedDatabase } from "./backend.ts";
import { deliveryEndpointGate, type ManagedDatabase } from "./backend-gates.ts";
import { removeStrayAccounts } from "./stray-accounts.ts";
import { sqlLoginCheck } from "./successor-check.ts";

/** The managed MariaDB as the core's backend: the MariaDB's name, the server's address and CA. */
export type MariaDBBackend = ManagedDatabase & { name: string };

/** The ControlPlanes in `namespace` whose managed MariaDB is `name`. */
export function controlPlanesOfMariaDB(
  controlPlanes: KubeObject[],
  namespace: string,
  name: string,
): KubeObject[] {
  return controlPlanes.filter((cp) => {
    const database = (cp["spec"] as { infrastructure?: { database?: { clusterRef?: { name?: string } } } })
      ?.infrastructure?.database;
    return cp.metadata?.namespace === namespace && database?.clusterRef?.name === name;
  });
}

export function mariaDBDatabaseOrder(
  options: {
    /** Asked before each stray account's DROP USER on the server (the manager's Lease fence). */
    fence?: WriteFence | undefined;
    /** The process's one way to MariaDB (shared with the SQL controller); its TLS makes Users REQUIRE X509. */
    transport?: MariaDBTransport | undefined;
    /** With TLS, the folder the delivered URI names for the tenant's ca.crt, tls.crt and tls.key. */
    tenantTlsDir?: string | undefined;
  } = {},
): OrderKind<MariaDBBackend> {
  // The orders whose Users hold accounts of the scheme before issue 31 (names over 53 characters),
  // as the last listing of their children found: their accounts keep that scheme. Every pass lists
  // before it names an account to write or deliver; until a first listing, the new scheme only makes
  // the delivered Secret's evidence read "none", and the status then stands.
  const legacy = new Set<string>();
  const keyOf = (order: OrderKey) => `${order.cluster}/${order.namespace}/${order.name}`;
  const accountOf = (order: OrderKey, generation: number) =>
    userName(order, generation, legacy.has(keyOf(order)));
  const tlsDir = options.tenantTlsDir ?? DEFAULT_TENANT_TLS_DIR;
  return orderKind(options.fence, options.transport ?? defaultTransport, tlsDir, {
    accountOf,
    prefixOf: (order) => userNamePrefix(order, legacy.has(keyOf(order))),
    heard: (order, accounts) => {
      if (legacyAccounts(order, accounts)) legacy.add(keyOf(order));
      else legacy.delete(keyOf(order));
    },
  });
}

interface AccountScheme {
  accountOf(order: OrderKey, generation: number): string;
  prefixOf(order: OrderKey): string;
  heard(order: OrderKey, accounts: string[]): void;
}

/** What the kind is and how its conditions speak: nothing here needs the process's clients. */
const described = {
  controller: "mariadbdatabase",
  gvk: mariaDBDatabaseKind,
  naming: MARIADB_NAMING,
  parse: (raw) => parseOrder(MariaDBDatabaseSchema, raw),

  eventTypes,
  resourceCondition: DATABASE_READY,
  resourceStatusField: "database",
  resource: (order, key) =>
    databaseName({
      ...key,
      databaseName: (order.spec as { databaseName?: string }).databaseName,
      provisioned: provisionedDatabase(order.status?.["database"]),
    }),
  words: viewWords,
  childReadiness: sqlReadiness,
  reasons: {
    error: Reason.DatabaseError,
    backendNotInstalled: Reason.SqlOperatorNotInstalled,
    waitingForContainer: Reason.WaitingForSchema,
    containerFailed: Reason.DatabaseFailed,
    view: {
      Provisioned: Reason.DatabaseProvisioned,
      WaitingForAccount: Reason.WaitingForUser,
      Failed: Reason.DatabaseFailed,
    },
  },
  messages: {
    allReady: messages.allReady,
    delivered: messages.delivered,
    backendNotInstalled: messages.sqlOperatorNotInstalled,
    waitingForContainer: messages.waitingForSchema,
    containerFailed: messages.databaseFailed,
  },
} satisfies Partial<OrderKind<MariaDBBackend>>;

const orderKind = (
  fence: WriteFence | undefined,
  transport: MariaDBTransport,
  tlsDir: string,
  scheme: AccountScheme,
): OrderKind<MariaDBBackend> => ({
  ...described,

  // The managed MariaDB's readiness, from the cache. Its credentials Secret carries no label to select it
  // by, so a wait for it is looked at again after 10 s instead.
  backendWatches: [
    {
      kind: mariaDBKind,
      controlPlanesOf: (mariadb, cps) =>
        controlPlanesOfMariaDB(cps, mariadb.metadata?.namespace ?? "", mariadb.metadata?.name ?? ""),
    },
  ],
  async backend(management, controlPlane) {
    const server = await managedDatabase(management, controlPlane);
    return server.open ? { open: true, value: { ...server.value, name: server.value.mariadb.name } } : server;
  },
  // No backendNamed: a MariaDB the ControlPlane no longer names is reached with the administrator's
  // credentials of the ControlPlane's secretRef, which names the new server's by then.
  backendKind: "MariaDB",
  deliveryEndpoint: deliveryEndpointGate,

  applyContainer: applyDatabase,
  container: {
    gvk: sqlDatabaseKind,
    name: databaseChildName,
    backendRef: "mariaDbRef",
    spec: pickDatabaseSpec,
    policy: (deletionPolicy) => ({ cleanupPolicy: cleanupPolicy(deletionPolicy) }),
    settled: databaseSettled,
  },
  listGenerations: (kube, order, namespace) =>
    listGenerations(kube, order, namespace, (accounts) => scheme.heard(order, accounts)),
  performAction: (kube, order, place, action) =>
    performAction(kube, order, place, action, scheme.accountOf, transport.tls),
  userName: scheme.accountOf,
  teardownKinds: [sqlGrantKind, sqlUserKind],

  successorCheck: (_management, backend, login, timeoutMs) =>
    sqlLoginCheck(transport, backend, login, timeoutMs),
  connectionsOf: (management, backend, username, timeoutMs) =>
    serverConnections(transport, management, backend, username, timeoutMs),
  loginsOf: (management, backend, username, timeoutMs) =>
    serverLogins(transport, management, backend, username, timeoutMs),
  removeStrayAccounts: (management, server, _database, stray, timeoutMs, order) =>
    removeStrayAccounts(
      transport,
      management,
      server,
      order,
      stray,
      timeoutMs,
      fence,
      scheme.prefixOf(order),
    ),

  deliveredKeys: DELIVERED_KEYS,
  // With TLS the Secret carries the CA this process trusts for the server (the credentials Secret's
  // ca.crt, else mariadb-ca-file) and the URI the tenant's files; without, the server's ca.crt if any.
  deliveredData: ({ endpoint, resource, username, password, backend }) =>
    deliveredData({
      endpoint,
      database: resource,
      username,
      password,
      ca: transport.tls ? trustedCa(transport, backend.ca) : backend.ca,
      tlsDir: transport.tls ? tlsDir : undefined,
    }),
});
