// The schemas a mutating plugin's output is checked against, per gated kind.
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
  UserSchema,
  UserStatusSchema,
  VhostSchema,
  VhostStatusSchema,
} from "../api/index.ts";
import type { GatedKindName } from "./api.ts";

export interface GatedKind {
  name: GatedKindName;
  schema: z.ZodType;
  statusSchema: z.ZodType;
}

export const gatedKinds: Record<GatedKindName, GatedKind> = {
  RabbitMQVhost: {
    name: "RabbitMQVhost",
    schema: RabbitMQVhostSchema,
    statusSchema: RabbitMQVhostStatusSchema,
  },
  MariaDBDatabase: {
    name: "MariaDBDatabase",
    schema: MariaDBDatabaseSchema,
    statusSchema: MariaDBDatabaseStatusSchema,
  },
  Vhost: { name: "Vhost", schema: VhostSchema, statusSchema: VhostStatusSchema },
  User: { name: "User", schema: UserSchema, statusSchema: UserStatusSchema },
  Permission: { name: "Permission", schema: PermissionSchema, statusSchema: PermissionStatusSchema },
  Queue: { name: "Queue", schema: QueueSchema, statusSchema: QueueStatusSchema },
  Exchange: { name: "Exchange", schema: ExchangeSchema, statusSchema: ExchangeStatusSchema },
  Binding: { name: "Binding", schema: BindingSchema, statusSchema: BindingStatusSchema },
  Policy: { name: "Policy", schema: PolicySchema, statusSchema: PolicyStatusSchema },
};

export function isGatedKind(name: string): name is GatedKindName {
  return Object.hasOwn(gatedKinds, name);
}
