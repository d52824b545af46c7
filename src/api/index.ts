// The API of vhost-broker: where each kind is served, and (from generated.ts) its zod schemas and types.
// The CRDs in crds/ are the source of truth; generated.test.ts checks these constants against them.
// This module imports no other component of the operator.

export interface KindRef {
  group: string;
  version: string;
  kind: string;
  plural: string;
  apiVersion: string;
  /** Every kind the operator reads or writes is namespaced. */
  namespaced: true;
}

function kind(group: string, version: string, name: string, plural: string): KindRef {
  const apiVersion = group ? `${group}/${version}` : version;
  return { group, version, kind: name, plural, apiVersion, namespaced: true };
}

/** Core Secrets: password Secrets, delivered Secrets, imported credentials. */
export const secretKind = kind("", "v1", "Secret", "secrets");
export const podKind = kind("", "v1", "Pod", "pods");

/** The order: a vhost and a rotating user for a tenant namespace. */
export const rabbitMQVhostKind = kind("c5c3.io", "v1alpha1", "RabbitMQVhost", "rabbitmqvhosts");
/** The order: a database and a rotating account on the ControlPlane's managed MariaDB. */
export const mariaDBDatabaseKind = kind("c5c3.io", "v1alpha1", "MariaDBDatabase", "mariadbdatabases");
/** What orders read of a ControlPlane: namespace assignments, the message bus and the MariaDB. */
export const controlPlaneKind = kind("c5c3.io", "v1alpha1", "ControlPlane", "controlplanes");

// The seven topology kinds, compatible with the upstream Messaging Topology Operator.
export const vhostKind = kind("rabbitmq.com", "v1beta1", "Vhost", "vhosts");
export const userKind = kind("rabbitmq.com", "v1beta1", "User", "users");
export const permissionKind = kind("rabbitmq.com", "v1beta1", "Permission", "permissions");
export const queueKind = kind("rabbitmq.com", "v1beta1", "Queue", "queues");
export const exchangeKind = kind("rabbitmq.com", "v1beta1", "Exchange", "exchanges");
export const bindingKind = kind("rabbitmq.com", "v1beta1", "Binding", "bindings");
export const policyKind = kind("rabbitmq.com", "v1beta1", "Policy", "policies");

/** The RabbitMQ cluster operator's kind; vhost-broker reads it but does not ship its CRD. */
export const rabbitmqClusterKind = kind("rabbitmq.com", "v1beta1", "RabbitmqCluster", "rabbitmqclusters");

/** mariadb-operator's kind: the managed MariaDB a ControlPlane names; read, its CRD not shipped. */
export const mariaDBKind = kind("k8s.mariadb.com", "v1alpha1", "MariaDB", "mariadbs");

export const topologyKinds = [
  vhostKind,
  userKind,
  permissionKind,
  queueKind,
  exchangeKind,
  bindingKind,
  policyKind,
] as const;

// Seed 002's four kinds, served by the built-in SQL controller. Their TypeScript names carry the
// prefix Sql (SqlUser, SqlUserSchema), since rabbitmq.com has a User too.
export const sqlDatabaseKind = kind("mariadb.osh.openstack.org", "v1alpha1", "Database", "databases");
export const sqlUserKind = kind("mariadb.osh.openstack.org", "v1alpha1", "User", "users");
export const sqlGrantKind = kind("mariadb.osh.openstack.org", "v1alpha1", "Grant", "grants");
export const sqlConnectionKind = kind("mariadb.osh.openstack.org", "v1alpha1", "Connection", "connections");

/** In the order a sweep goes: a grant needs its user, a connection its grant. */
export const sqlKinds = [sqlDatabaseKind, sqlUserKind, sqlGrantKind, sqlConnectionKind] as const;

/** Every kind whose CRD vhost-broker ships. */
export const shippedKinds = [
  rabbitMQVhostKind,
  mariaDBDatabaseKind,
  controlPlaneKind,
  ...topologyKinds,
  ...sqlKinds,
] as const;

export * from "./generated.ts";
export * from "./sql-claim.ts";
export * from "./sql-status.ts";
export * from "./meta.ts";
