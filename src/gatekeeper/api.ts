// The plugin API of the gatekeeper (seed 003): what a plugin module exports, and what its hooks
// receive. Stable under GATEKEEPER_API_VERSION: a change that breaks a plugin comes with a new version,
// and the loader refuses a plugin written for another one. docs/gatekeeper.md is its manual.
import type {
  Binding,
  BindingStatus,
  Exchange,
  ExchangeStatus,
  MariaDBDatabase,
  MariaDBDatabaseStatus,
  Permission,
  PermissionStatus,
  Policy,
  PolicyStatus,
  Queue,
  QueueStatus,
  RabbitMQVhost,
  RabbitMQVhostStatus,
  SqlConnection,
  SqlConnectionStatus,
  SqlDatabase,
  SqlDatabaseStatus,
  SqlGrant,
  SqlGrantStatus,
  SqlUser,
  SqlUserStatus,
  User,
  UserStatus,
  Vhost,
  VhostStatus,
} from "../api/index.ts";
import type { Kube } from "../runtime/port/kube.ts";
import type { LogSink } from "../runtime/base/logging.ts";

export const GATEKEEPER_API_VERSION = "gatekeeper.c5c3.io/v1";

/**
 * The kinds whose passes are gated, each with its object and status type. A later kind adds itself here.
 * A kind is named by its kind alone where no other gated kind has that name (the orders and the
 * rabbitmq.com kinds, named so since this API's first version), and as `<Kind>.<group>` otherwise: the
 * SQL kinds, whose `User` is not RabbitMQ's.
 */
export interface GatedKinds {
  RabbitMQVhost: { object: RabbitMQVhost; status: RabbitMQVhostStatus };
  MariaDBDatabase: { object: MariaDBDatabase; status: MariaDBDatabaseStatus };
  Vhost: { object: Vhost; status: VhostStatus };
  User: { object: User; status: UserStatus };
  Permission: { object: Permission; status: PermissionStatus };
  Queue: { object: Queue; status: QueueStatus };
  Exchange: { object: Exchange; status: ExchangeStatus };
  Binding: { object: Binding; status: BindingStatus };
  Policy: { object: Policy; status: PolicyStatus };
  "Database.mariadb.osh.openstack.org": { object: SqlDatabase; status: SqlDatabaseStatus };
  "User.mariadb.osh.openstack.org": { object: SqlUser; status: SqlUserStatus };
  "Grant.mariadb.osh.openstack.org": { object: SqlGrant; status: SqlGrantStatus };
  "Connection.mariadb.osh.openstack.org": { object: SqlConnection; status: SqlConnectionStatus };
}

export type GatedKindName = keyof GatedKinds;

export type DeepReadonly<T> = T extends Date | ((...args: never[]) => unknown)
  ? T
  : T extends (infer E)[]
    ? readonly DeepReadonly<E>[]
    : T extends object
      ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
      : T;

/** Given once, to `configure`, at start-up. */
export interface ConfigurationContext {
  /** The management cluster's Kubernetes port (live reads, server-side apply). */
  kube: Kube;
  /** The API server's version, e.g. v1.37.2 ("unknown" when it could not be read). */
  kubernetesVersion: string;
  /** A logger that names the plugin on every line. */
  log: LogSink;
  clock: { now(): number };
  /** The operator's environment: where a plugin reads its own settings. */
  env: Readonly<Record<string, string | undefined>>;
}

/** Given to every hook of one pass. */
export interface PassContext {
  kind: GatedKindName;
  /** The object's cluster: "" for the management cluster, else the target cluster's name. */
  cluster: string;
  /** The object's cluster's Kubernetes port, reading from the operator's caches where it can. */
  kube: Kube;
  /**
   * The management cluster's port, the same way: where the operator keeps what it made for an object
   * (an order's children), which a tenant of a target cluster cannot write. `kube` on that cluster.
   */
  management: Kube;
  /** The pass's logger (with its reconcile id), naming the plugin. */
  log: LogSink;
  clock: { now(): number };
  /** A pass of a deleted object: entry hooks observe, and what they throw or return is ignored. */
  teardown: boolean;
  /**
   * Aborts when the hook's time (--gatekeeper-hook-timeout) is up: by then the hook has failed and its
   * result will be discarded, so pass it on to what the hook waits for.
   */
  signal?: AbortSignal;
}

export type EntryContext = PassContext;

export interface ExitContext extends PassContext {
  /** How the pass went: rejected at entry, failed in the reconcile, or succeeded. */
  outcome: "succeeded" | "failed" | "rejected";
  /** What failed (a rejection's or the reconcile's message), when it did. */
  error?: string | undefined;
}

type Awaitable<T> = T | Promise<T>;

/** Receives frozen copies: it approves by returning, and rejects the pass by throwing. */
export interface ValidatingPlugin<O, S> {
  entry?(context: EntryContext, object: DeepReadonly<O>): Awaitable<void>;
  exit?(context: ExitContext, object: DeepReadonly<O>, status: DeepReadonly<S>): Awaitable<void>;
}

/**
 * Returns the object the pass reconciles (only its spec may differ; never written back) and, at exit,
 * the status to write. Both are checked against the kind's schema: no new fields.
 */
export interface MutatingPlugin<O, S> {
  entry?(context: EntryContext, object: O): Awaitable<O>;
  exit?(context: ExitContext, object: DeepReadonly<O>, status: S): Awaitable<S>;
}

type Validating<K extends GatedKindName> = ValidatingPlugin<GatedKinds[K]["object"], GatedKinds[K]["status"]>;
type Mutating<K extends GatedKindName> = MutatingPlugin<GatedKinds[K]["object"], GatedKinds[K]["status"]>;

export type ValidatingRabbitMQVhostPlugin = Validating<"RabbitMQVhost">;
export type MutatingRabbitMQVhostPlugin = Mutating<"RabbitMQVhost">;
export type ValidatingMariaDBDatabasePlugin = Validating<"MariaDBDatabase">;
export type MutatingMariaDBDatabasePlugin = Mutating<"MariaDBDatabase">;
export type ValidatingVhostPlugin = Validating<"Vhost">;
export type MutatingVhostPlugin = Mutating<"Vhost">;
export type ValidatingUserPlugin = Validating<"User">;
export type MutatingUserPlugin = Mutating<"User">;
export type ValidatingPermissionPlugin = Validating<"Permission">;
export type MutatingPermissionPlugin = Mutating<"Permission">;
export type ValidatingQueuePlugin = Validating<"Queue">;
export type MutatingQueuePlugin = Mutating<"Queue">;
export type ValidatingExchangePlugin = Validating<"Exchange">;
export type MutatingExchangePlugin = Mutating<"Exchange">;
export type ValidatingBindingPlugin = Validating<"Binding">;
export type MutatingBindingPlugin = Mutating<"Binding">;
export type ValidatingPolicyPlugin = Validating<"Policy">;
export type MutatingPolicyPlugin = Mutating<"Policy">;
export type ValidatingSqlDatabasePlugin = Validating<"Database.mariadb.osh.openstack.org">;
export type MutatingSqlDatabasePlugin = Mutating<"Database.mariadb.osh.openstack.org">;
export type ValidatingSqlUserPlugin = Validating<"User.mariadb.osh.openstack.org">;
export type MutatingSqlUserPlugin = Mutating<"User.mariadb.osh.openstack.org">;
export type ValidatingSqlGrantPlugin = Validating<"Grant.mariadb.osh.openstack.org">;
export type MutatingSqlGrantPlugin = Mutating<"Grant.mariadb.osh.openstack.org">;
export type ValidatingSqlConnectionPlugin = Validating<"Connection.mariadb.osh.openstack.org">;
export type MutatingSqlConnectionPlugin = Mutating<"Connection.mariadb.osh.openstack.org">;

/** What a plugin module exports as its default export. One kind is either validated or mutated by a plugin. */
export interface GatekeeperPlugin {
  apiVersion: typeof GATEKEEPER_API_VERSION;
  /** Names the plugin in logs, metrics and rejection messages; unique among the loaded plugins. */
  name: string;
  /** Called once at start-up; a throw stops the operator (exit 2). */
  configure?(context: ConfigurationContext): Awaitable<void>;
  validating?: { [K in GatedKindName]?: Validating<K> };
  mutating?: { [K in GatedKindName]?: Mutating<K> };
}
