// The recovery from a broker restarted empty, in the lane-per-broker phases: the second broker, holding
// N orders' vhosts, users and permissions, is reset as a lost volume would leave it
// (harness/world/emptied-broker.ts), and the figure is the time until it holds every one of them again.
// No peer publishes one.
import type { LocalBroker } from "../world/managed-bus.ts";
import { resetSecondBroker } from "../world/emptied-broker.ts";
import { until } from "./concurrency.ts";

/** The names a broker holds of one list endpoint, by `key`. */
async function names(broker: LocalBroker, list: string, key: (item: Record<string, string>) => string) {
  const authorization = `Basic ${Buffer.from(`${broker.adminUsername}:${broker.adminPassword}`).toString("base64")}`;
  const answer = await fetch(new URL(`/api/${list}`, broker.managementUrl), { headers: { authorization } });
  if (!answer.ok) return new Set<string>();
  return new Set(((await answer.json()) as Record<string, string>[]).map(key));
}

const lists: [string, (item: Record<string, string>) => string][] = [
  ["vhosts", (v) => v["name"] ?? ""],
  ["users", (u) => u["name"] ?? ""],
  ["permissions", (p) => `${p["vhost"] ?? ""} ${p["user"] ?? ""}`],
];

/** What the broker holds: every vhost, user and permission. */
const held = (broker: LocalBroker) => Promise.all(lists.map(([list, key]) => names(broker, list, key)));

/** Resets the second broker and waits until it holds again everything it held; the ms that took. */
export async function emptiedBrokerRecovery(broker: LocalBroker, signal?: AbortSignal): Promise<number> {
  const before = await held(broker);
  await resetSecondBroker();
  const reset = performance.now();
  await until(
    "the emptied broker's vhosts, users and permissions back",
    async () => (await held(broker)).every((now, i) => [...(before[i] ?? [])].every((name) => now.has(name))),
    10 * 60_000,
    250,
    signal,
  );
  return performance.now() - reset;
}
