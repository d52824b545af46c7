// A broker of the local environment restarted empty, as a lost volume or a `force_reset` leaves a
// broker: its node reset with rabbitmqctl, then its administrator made again as `scripts/localenv.sh up`
// makes it (rabbitmq_ready in scripts/localenv/rabbitmq.sh: through guest, with its password and
// permissions on "/"), so later tests log in as before. The second broker is the one tests reset
// (e2e/broker-restarted-empty.itest.ts, the benchmark's lanes phase); the first one holds what every
// other test made, and only the chaos suite resets it (its emptied-broker fault, while it holds the
// operator lock: the orders it runs live there).
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import type { LocalBroker } from "./managed-bus.ts";
import { eventually } from "./kube.ts";
import { localNode } from "./local-brokers.ts";

const run = promisify(execFile);

/** The local environment's brokers: 1 is `rabbitmq` (every test's), 2 is `rabbitmq-2`. */
export type LocalNode = 1 | 2;

const part = (node: LocalNode) => (node === 1 ? "rabbitmq" : "rabbitmq-2");

/** A broker of the local environment, from the RABBITMQ_* (1) or RABBITMQ_2_* (2) variables. */
export function localBroker(node: LocalNode): LocalBroker {
  return localNode(part(node)).broker;
}

/** The second broker of the local environment, from the RABBITMQ_2_* variables. */
export function secondBroker(): LocalBroker {
  return localBroker(2);
}

/** rabbitmqctl on a node, through the wrapper `scripts/localenv.sh up` writes beside its state (its node's environment, and its root filesystem for a 4.x node). */
async function rabbitmqctl(node: LocalNode, ...args: string[]): Promise<void> {
  await run(localNode(part(node)).rabbitmqctl, args);
}

/** PUT on the broker's management API as guest, once its management listener answers again. */
async function putAsGuest(broker: LocalBroker, path: string, body: object): Promise<void> {
  const request = () =>
    fetch(new URL(`/api/${path}`, broker.managementUrl), {
      method: "PUT",
      headers: {
        authorization: `Basic ${Buffer.from("guest:guest").toString("base64")}`,
        "content-type": "application/json",
      },
      body: JSON.stringify(body),
    }).catch(() => undefined);
  await eventually(`PUT /api/${path}`, async () => (await request())?.ok || undefined, 30_000);
}

/** Resets a broker of the local environment to an empty one and makes its administrator again, as `up` does. */
export async function resetBroker(node: LocalNode): Promise<void> {
  const broker = localBroker(node);
  await rabbitmqctl(node, "stop_app");
  try {
    await rabbitmqctl(node, "force_reset");
  } finally {
    // The node runs its app again whatever the reset did: a stopped app is no broker `up` would restart.
    await rabbitmqctl(node, "start_app");
  }
  const admin = encodeURIComponent(broker.adminUsername);
  const password = broker.adminPassword;
  await putAsGuest(broker, `users/${admin}`, { password, tags: "administrator" });
  await putAsGuest(broker, `permissions/%2F/${admin}`, { configure: ".*", write: ".*", read: ".*" });
}

/** Resets the second broker to an empty one and makes its administrator again, as `up` does. */
export function resetSecondBroker(): Promise<void> {
  return resetBroker(2);
}
