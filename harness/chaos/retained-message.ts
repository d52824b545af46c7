// What a Retain order's deletion must keep: a message a consumer left in a durable queue of its vhost.
import { randomBytes } from "node:crypto";
import amqp from "amqplib";
import { brokerApi, type TargetWorld } from "../world/target-cluster.ts";

export const RETAINED_QUEUE = "chaos-retained";

/** Leaves one persistent message in the durable queue RETAINED_QUEUE, as the delivered user; its body. */
export async function retainMessage(transportUrl: string): Promise<string> {
  const url = new URL(transportUrl);
  const connection = await amqp.connect(
    {
      protocol: "amqp",
      hostname: url.hostname,
      port: Number(url.port || 5672),
      username: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
      vhost: decodeURIComponent(url.pathname.slice(1)),
    },
    { timeout: 5_000 },
  );
  try {
    const channel = await connection.createConfirmChannel();
    await channel.assertQueue(RETAINED_QUEUE, { durable: true });
    const body = randomBytes(8).toString("hex");
    channel.sendToQueue(RETAINED_QUEUE, Buffer.from(body), { persistent: true });
    await channel.waitForConfirms();
    await channel.close();
    return body;
  } finally {
    await connection.close().catch(() => undefined);
  }
}

/**
 * What is wrong with the retained message after the order's deletion (the broker's administrator asks
 * the management API, whose queue figures lag a few seconds), or undefined when the queue holds it.
 */
export async function checkRetained(
  w: TargetWorld,
  vhost: string,
  body: string,
): Promise<string | undefined> {
  if (!body) return "no message was left in its vhost before the deletion";
  const path = `/api/queues/${encodeURIComponent(vhost)}/${RETAINED_QUEUE}`;
  let last = "";
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const res = await brokerApi(w, "GET", path);
    if (res.ok) {
      const queue = (await res.json()) as { messages?: number };
      if ((queue.messages ?? 0) >= 1) return undefined;
      last = `queue ${RETAINED_QUEUE} holds ${queue.messages ?? 0} messages`;
    } else {
      await res.arrayBuffer();
      last = `GET ${path}: HTTP ${res.status}`;
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
  return `Retain, but its vhost lost the message left before the deletion (${last})`;
}
