// The parts of management API answers this module reads, checked with zod. Objects are loose: the
// broker adds fields between versions.
import { z } from "zod";

const args = z.record(z.string(), z.unknown());
// 3.9+ answers a list; older brokers a comma-separated string.
const tags = z
  .union([z.array(z.string()), z.string()])
  .transform((t) => (typeof t === "string" ? t.split(",").filter(Boolean) : t));

export const vhostSchema = z.looseObject({
  name: z.string(),
  description: z.string().optional(),
  tags: tags.optional(),
  default_queue_type: z.string().optional(),
  tracing: z.boolean().optional(),
});

export const limitsSchema = z.array(z.looseObject({ value: z.record(z.string(), z.number()) }));

export const userSchema = z.looseObject({
  name: z.string(),
  password_hash: z.string(),
  hashing_algorithm: z.string(),
  tags: tags,
});

export const permissionSchema = z.looseObject({
  configure: z.string(),
  write: z.string(),
  read: z.string(),
});

export const queueSchema = z.looseObject({
  name: z.string(),
  type: z.string().optional(),
  durable: z.boolean(),
  auto_delete: z.boolean(),
  arguments: args,
});

/** What decides whether a queue may go under if-empty / if-unused; the counts are the management stats. */
export const queueUseSchema = z.looseObject({
  type: z.string().optional(),
  messages: z.number().optional(),
  consumers: z.number().optional(),
});

export const exchangeSchema = z.looseObject({
  name: z.string(),
  type: z.string(),
  durable: z.boolean(),
  auto_delete: z.boolean(),
  arguments: args,
});

export const bindingsSchema = z.array(
  z.looseObject({
    routing_key: z.string(),
    arguments: args,
    properties_key: z.string(),
  }),
);

export const policySchema = z.looseObject({
  pattern: z.string(),
  "apply-to": z.string(),
  priority: z.number(),
  definition: args,
});
