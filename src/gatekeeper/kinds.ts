// The gated kinds, each by its API group and kind (a SQL `User` is not RabbitMQ's), with the name
// plugins know it by and the schemas a mutating plugin's output is checked against.
import type { z } from "zod";
import {
  BindingSchema,
  BindingStatusSchema,
  ExchangeSchema,
  ExchangeStatusSchema,
  MariaDBDatabaseSchema,
  MariaDBDatabaseStatusSchema,
  PermissionSchema,
  PermissionStatusSchema,
  PolicySchema,
  PolicyStatusSchema,
  QueueSchema,
  QueueStatusSchema,
  RabbitMQVhostSchema,
  RabbitMQVhostStatusSchema,
  SqlConnectionSchema,
  SqlConnectionStatusSchema,
  SqlDatabaseSchema,
  SqlDatabaseStatusSchema,
  SqlGrantSchema,
  SqlGrantStatusSchema,
  SqlUserSchema,
  SqlUserStatusSchema,
  UserSchema,
  UserStatusSchema,
  VhostSchema,
  VhostStatusSchema,
} from "../api/index.ts";
import type { GatedKindName } from "./api.ts";

export interface GatedKind {
  name: GatedKindName;
  group: string;
  kind: string;
  schema: z.ZodType;
  statusSchema: z.ZodType;
}

const gated = (
  group: string,
  kind: string,
  schema: z.ZodType,
  statusSchema: z.ZodType,
  name: GatedKindName = kind as GatedKindName,
): GatedKind => ({ name, group, kind, schema, statusSchema });

const rabbitmq = "rabbitmq.com";
const sql = "mariadb.osh.openstack.org";
/** A SQL kind, named with its group. */
const inSql = (kind: string, schema: z.ZodType, statusSchema: z.ZodType) =>
  gated(sql, kind, schema, statusSchema, `${kind}.${sql}` as GatedKindName);

export const gatedKinds: Record<GatedKindName, GatedKind> = {
  RabbitMQVhost: gated("c5c3.io", "RabbitMQVhost", RabbitMQVhostSchema, RabbitMQVhostStatusSchema),
  MariaDBDatabase: gated("c5c3.io", "MariaDBDatabase", MariaDBDatabaseSchema, MariaDBDatabaseStatusSchema),
  Vhost: gated(rabbitmq, "Vhost", VhostSchema, VhostStatusSchema),
  User: gated(rabbitmq, "User", UserSchema, UserStatusSchema),
  Permission: gated(rabbitmq, "Permission", PermissionSchema, PermissionStatusSchema),
  Queue: gated(rabbitmq, "Queue", QueueSchema, QueueStatusSchema),
  Exchange: gated(rabbitmq, "Exchange", ExchangeSchema, ExchangeStatusSchema),
  Binding: gated(rabbitmq, "Binding", BindingSchema, BindingStatusSchema),
  Policy: gated(rabbitmq, "Policy", PolicySchema, PolicyStatusSchema),
  "Database.mariadb.osh.openstack.org": inSql("Database", SqlDatabaseSchema, SqlDatabaseStatusSchema),
  "User.mariadb.osh.openstack.org": inSql("User", SqlUserSchema, SqlUserStatusSchema),
  "Grant.mariadb.osh.openstack.org": inSql("Grant", SqlGrantSchema, SqlGrantStatusSchema),
  "Connection.mariadb.osh.openstack.org": inSql("Connection", SqlConnectionSchema, SqlConnectionStatusSchema),
};

export function isGatedKind(name: string): name is GatedKindName {
  return Object.hasOwn(gatedKinds, name);
}

/**
 * The name plugins know the kind of `group` and `kind` by, or, for a kind that is not gated, a name no
 * plugin can hook (`<Kind>.<group>`): a pass of it goes through the gatekeeper untouched.
 */
export function gatedKindName(ref: { group: string; kind: string }): string {
  const found = Object.values(gatedKinds).find((g) => g.group === ref.group && g.kind === ref.kind);
  return found?.name ?? `${ref.kind}.${ref.group}`;
}
