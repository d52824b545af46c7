// The local environment's second broker restarted empty, as a lost volume or a `force_reset` leaves a
// broker: its node reset with rabbitmqctl, then its administrator made again as `scripts/localenv.sh up`
// makes it (through guest, with its password and permissions on "/"), so later tests log in as before.
// Only the second broker is ever reset: the first one holds what every other test made.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { localBrokerFromEnv, type LocalBroker } from "../../scripts/demo/managed-bus.ts";
import { localEnv } from "../../test/support/env.ts";
import { eventually } from "../../test/support/kube.ts";

const run = promisify(execFile);

/** The second broker of the local environment, from the RABBITMQ_2_* variables. */
export function secondBroker(): LocalBroker {
  const env = localEnv();
  return localBrokerFromEnv({
    RABBITMQ_URL: env.RABBITMQ_2_URL,
    RABBITMQ_MANAGEMENT_URL: env.RABBITMQ_2_MANAGEMENT_URL,
    RABBITMQ_ADMIN_USERNAME: env.RABBITMQ_2_ADMIN_USERNAME,
    RABBITMQ_ADMIN_PASSWORD: env.RABBITMQ_2_ADMIN_PASSWORD,
  });
}

/** rabbitmqctl on the second node, with the environment its start had (scripts/localenv/rabbitmq.sh). */
async function rabbitmqctl(...args: string[]): Promise<void> {
  const env = localEnv();
  const state = `${env.LOCALENV_STATE}/rabbitmq-2`;
  // The epmd port of both nodes, as the first node's wrapper has it.
  const epmd = /ERL_EPMD_PORT=(\d+)/.exec(readFileSync(env.RABBITMQCTL, "utf8"))?.[1] ?? "25683";
  await run("/usr/lib/rabbitmq/bin/rabbitmqctl", args, {
    env: {
      ...process.env,
      HOME: `${state}/home`,
      ERL_EPMD_PORT: epmd,
      RABBITMQ_NODENAME: "localenv2@localhost",
      RABBITMQ_CONF_ENV_FILE: `${state}/rabbitmq-env.conf`,
    },
  });
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

/** Resets the second broker to an empty one and makes its administrator again, as `up` does. */
export async function resetSecondBroker(): Promise<void> {
  const broker = secondBroker();
  await rabbitmqctl("stop_app");
  await rabbitmqctl("force_reset");
  await rabbitmqctl("start_app");
  const admin = encodeURIComponent(broker.adminUsername);
  const password = broker.adminPassword;
  await putAsGuest(broker, `users/${admin}`, { password, tags: "administrator" });
  await putAsGuest(broker, `permissions/%2F/${admin}`, { configure: ".*", write: ".*", read: ".*" });
}
