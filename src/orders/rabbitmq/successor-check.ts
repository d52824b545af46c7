// The check before a switch: does the broker accept the successor's credentials? By default it asks the
// management API the operator already reaches (`GET /api/users/{name}`) and compares the stored salted
// hash with the password from the successor's Secret, so no AMQP path from the operator to the broker's
// in-cluster address is needed. An AMQP login, or no check at all, are options. Reasons land in
// VhostReady's message: built from status codes and user names, never from a credential.
import { verifyPassword } from "../../rabbitmq/password.ts";
import type { Kube } from "../../runtime/kube.ts";
import type { SwitchCheck } from "../core/generations.ts";
import type { SuccessorLogin } from "../core/kind.ts";
import { amqpLoginCheck } from "./broker-check.ts";
import type { ManagedBus } from "./bus-gates.ts";
import { managementApi } from "./management.ts";

export const SUCCESSOR_CHECKS = ["hash", "amqp", "none"] as const;
export type SuccessorCheckMode = (typeof SUCCESSOR_CHECKS)[number];

export type BusSuccessorCheck = (
  management: Kube,
  bus: ManagedBus,
  login: SuccessorLogin,
  timeoutMs: number,
) => Promise<SwitchCheck>;

export function successorCheck(mode: SuccessorCheckMode, messagingDomain: string): BusSuccessorCheck {
  if (mode === "none") return async () => ({ accepted: true });
  if (mode === "amqp") return (_kube, _bus, login, timeoutMs) => amqpLoginCheck(login, timeoutMs);
  return (kube, bus, login, timeoutMs) => hashCheck(kube, bus, login, timeoutMs, messagingDomain);
}

const refused = (reason: string): SwitchCheck => ({ accepted: false, reason });

async function hashCheck(
  kube: Kube,
  bus: ManagedBus,
  login: SuccessorLogin,
  timeoutMs: number,
  domain: string,
): Promise<SwitchCheck> {
  const api = await managementApi(kube, bus, domain);
  if (!api.ok) return refused(api.reason);
  const who = `user "${login.username}"`;
  const answer = await api.get(`api/users/${encodeURIComponent(login.username)}`, timeoutMs);
  if (!answer.ok) {
    return refused(`the broker's management API cannot be reached to check ${who} (${answer.why})`);
  }
  const response = answer.response;
  if (response.status === 404) {
    await response.arrayBuffer();
    return refused(`the broker holds no ${who}`);
  }
  if (!response.ok) {
    await response.arrayBuffer();
    return refused(`the broker's management API answered HTTP ${response.status} for ${who}`);
  }
  const user = (await response.json()) as { password_hash?: unknown; hashing_algorithm?: unknown };
  const hash = typeof user.password_hash === "string" ? user.password_hash : "";
  const algorithm = typeof user.hashing_algorithm === "string" ? user.hashing_algorithm : "";
  return verifyPassword(login.password, hash, algorithm)
    ? { accepted: true }
    : refused(`the broker holds another password for ${who}`);
}
