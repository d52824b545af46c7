// The mark of a broker's definitions: the stored password hash of the login's own user. RabbitMQ salts
// a hash afresh whenever it creates a user, and a broker restarted empty creates its default user again
// (from its configuration, or whoever sets it up does), so the mark changes when the broker lost its
// definitions and stays through a restart that kept them. One small GET; only an HMAC of the hash is kept.
import { createHmac, type KeyObject } from "node:crypto";
import { z } from "zod";
import type { ManagementClient } from "../../rabbitmq/client.ts";
import { apiPath } from "../../rabbitmq/paths.ts";

const ownUser = z.looseObject({ password_hash: z.string() });

/** The mark; undefined where the login is no user of the broker's own database (LDAP, say). */
export async function definitionsMark(client: ManagementClient, key: KeyObject): Promise<string | undefined> {
  const user = await client.find(apiPath("users", client.username), ownUser);
  return user && createHmac("sha256", key).update(user.password_hash).digest("base64url");
}
