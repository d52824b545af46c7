// What the broker-level and the controller-level topology tests share: the management client as the
// local broker's administrator, unique names, and an AMQP login check.
import amqp from "amqplib";
import { ManagementClients } from "../../src/topology/broker/index.ts";
import { localEnv } from "../../harness/world/env.ts";

export const env = localEnv();
export const clients = new ManagementClients();
export const admin = clients.client({
  url: env.RABBITMQ_MANAGEMENT_URL,
  username: env.RABBITMQ_ADMIN_USERNAME,
  password: env.RABBITMQ_ADMIN_PASSWORD,
});

export const unique = (what: string) =>
  `vb-${what}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;

/** Whether an AMQP login as this user to this vhost is accepted; anything but a refusal throws. */
export async function canLogIn(username: string, password: string, vhost: string): Promise<boolean> {
  const url = new URL(env.RABBITMQ_URL);
  url.username = encodeURIComponent(username);
  url.password = encodeURIComponent(password);
  url.pathname = `/${encodeURIComponent(vhost)}`;
  try {
    const connection = await amqp.connect(url.toString());
    await connection.close();
    return true;
  } catch (error) {
    if (/ACCESS_REFUSED|403/.test(String(error))) return false;
    throw error;
  }
}
