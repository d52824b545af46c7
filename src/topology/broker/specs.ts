// The desired state of each kind, in the field names of upstream's rabbitmq.com/v1beta1 specs. A
// controller maps a custom resource onto these after resolving what the broker cannot see (a
// user's name and password from its Secret, a userReference to the user's name).

export type Arguments = Record<string, unknown>;

export interface VhostSpec {
  name: string;
  description?: string;
  tags?: string[];
  /** quorum | classic | stream */
  defaultQueueType?: string;
  tracing?: boolean;
  limits?: { connections?: number; queues?: number };
}

/** Either a plain password (sent as a salted SHA-512 hash) or a hash to store as given. */
export type UserCredentials = { password: string } | { passwordHash: string };

export interface UserSpec {
  /** The broker user's name (upstream: the credentials Secret's `username`). */
  username: string;
  credentials: UserCredentials;
  /** management | policymaker | monitoring | administrator */
  tags?: string[];
  limits?: { connections?: number; channels?: number };
}

export interface PermissionSpec {
  /** The broker user's name (upstream: `user`, or the referenced User's `status.username`). */
  user: string;
  vhost: string;
  permissions: { configure?: string; write?: string; read?: string };
}

export interface QueueSpec {
  name: string;
  vhost?: string;
  /** quorum | classic | stream; sent as body `type` and as `arguments["x-queue-type"]` */
  type?: string;
  durable?: boolean;
  autoDelete?: boolean;
  arguments?: Arguments;
  deleteIfEmpty?: boolean;
  deleteIfUnused?: boolean;
}

export interface ExchangeSpec {
  name: string;
  vhost?: string;
  type?: string;
  durable?: boolean;
  autoDelete?: boolean;
  arguments?: Arguments;
}

export interface BindingSpec {
  vhost?: string;
  source: string;
  destination: string;
  destinationType: "queue" | "exchange";
  routingKey?: string;
  arguments?: Arguments;
}

export interface PolicySpec {
  name: string;
  vhost?: string;
  pattern: string;
  /** queues | classic_queues | quorum_queues | streams | exchanges | all */
  applyTo?: string;
  priority?: number;
  definition: Arguments;
}

/** The answer of a read back: whether the broker object exists and matches the desired state. */
export interface ReadBack {
  exists: boolean;
  matches: boolean;
  /** The fields that differ (names only, never values: a value may be secret). */
  differences: string[];
}

export const DEFAULT_VHOST = "/";

export function readBack(exists: boolean, differences: string[]): ReadBack {
  return { exists, matches: exists && differences.length === 0, differences: exists ? differences : [] };
}
