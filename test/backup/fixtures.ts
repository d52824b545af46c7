// What the OpenBao tests share: a backup as an order writes it (its keys and its path's custom_metadata),
// a fresh password, and the means to search an error for secrets.
import { randomBytes } from "node:crypto";
import { inspect } from "node:util";
import { ownerMetadata } from "../../src/backup/owner.ts";
import type { StoredData, StoredMetadata } from "../../src/backup/store.ts";

/** The six keys of a delivered credential, with `password` in the two places it appears. */
export function credentials(password: string): StoredData {
  return {
    transport_url: `rabbit://workflow-cebe0e7a-v1:${password}@rabbitmq.openstack.svc:5672/workflow-cebe0e7a`,
    host: "rabbitmq.openstack.svc",
    port: "5672",
    username: "workflow-cebe0e7a-v1",
    password,
    vhost: "workflow-cebe0e7a",
  };
}

/** The custom_metadata of the order `tenant-a/workflow` on the management cluster at `generation`. */
export function owner(generation = 1): StoredMetadata {
  return ownerMetadata({
    cluster: "",
    namespace: "tenant-a",
    kind: "RabbitMQVhost",
    name: "workflow",
    uid: "6f1c7a52-0d43-4c0e-9a51-2b3c4d5e6f70",
    generation,
  });
}

export const password = (): string => randomBytes(32).toString("base64url");

/** Everything an error can show: message, stack, own properties and the inspected object. */
export function everything(err: unknown): string {
  return [String(err), (err as Error)?.stack ?? "", JSON.stringify(err), inspect(err, { depth: 10 })].join(
    "\n",
  );
}

/** The error `promise` rejects with; throws if it resolves. */
export async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error("expected the call to fail");
}
