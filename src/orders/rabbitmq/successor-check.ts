// The check before a switch: does the broker accept the successor's credentials on the order's vhost?
// By default it asks the management API, reached as every broker request is (bus-broker.ts): it compares
// the stored salted hash (`GET /api/users/{name}`) with the password from the successor's Secret, then
// reads the user's permission on the vhost (`GET /api/permissions/{vhost}/{name}`), so no AMQP path from
// the operator to the broker's in-cluster address is needed. The permission is read because a user
// deleted and made again on the broker loses its permissions there while its Permission still reads
// Ready: a consumer would be refused the vhost. An AMQP login, or no check at all, are
// options. Reasons land in VhostReady's message: built from status codes and user names, never from a
// credential.
import { z } from "zod";
import type { BrokerConnections } from "../../rabbitmq/broker-access.ts";
import type { ManagementClient } from "../../rabbitmq/client.ts";
import { ManagementNotFoundError } from "../../rabbitmq/errors.ts";
import { verifyPassword } from "../../rabbitmq/password.ts";
import { apiPath } from "../../rabbitmq/paths.ts";
import type { Kube } from "../../runtime/port/kube.ts";
import type { SwitchCheck } from "../core/generations.ts";
import type { SuccessorLogin } from "../core/kind.ts";
import { amqpLoginCheck } from "./amqp-login-check.ts";
import type { ManagedBus } from "./backend-gates.ts";
import { brokerFailure, busBroker } from "./bus-broker.ts";

export const SUCCESSOR_CHECKS = ["hash", "amqp", "none"] as const;
export type SuccessorCheckMode = (typeof SUCCESSOR_CHECKS)[number];

export type BusSuccessorCheck = (
  management: Kube,
  bus: ManagedBus,
  login: SuccessorLogin,
  timeoutMs: number,
) => Promise<SwitchCheck>;

export function successorCheck(mode: SuccessorCheckMode, broker: BrokerConnections): BusSuccessorCheck {
  if (mode === "none") return async () => ({ accepted: true });
  if (mode === "amqp") return (_kube, _bus, login, timeoutMs) => amqpLoginCheck(login, timeoutMs);
  return async (kube, bus, login, timeoutMs) => {
    const access = await busBroker(kube, bus, broker);
    if (!access.ok) return { accepted: false, reason: access.reason };
    const started = performance.now();
    const hash = await hashCheck(access.client, login, timeoutMs);
    if (!hash.accepted) return hash;
    return permissionCheck(
      access.client,
      login,
      Math.max(1, Math.round(timeoutMs - (performance.now() - started))),
    );
  };
}

/** How often the user is read before a refusal, and the wait between reads. */
export interface HashReads {
  reads: number;
  gapMs: number;
}

// A RabbitMQ 4.x cluster answers a read from the node asked, whose copy of the user may lag the PUT
// that another node took (Khepri reads are local): an absent user or another hash is read again a few
// times before the switch is refused. Within the check's deadline, whatever is left of it.
const defaultReads: HashReads = { reads: 4, gapMs: 250 };

const UserSchema = z.object({
  password_hash: z.string().optional(),
  hashing_algorithm: z.string().optional(),
});

export function hashCheck(
  client: ManagementClient,
  login: SuccessorLogin,
  timeoutMs: number,
  retry: HashReads = defaultReads,
): Promise<SwitchCheck> {
  return readAgain(timeoutMs, retry, (signal) => readOnce(client, login, signal));
}

/** Whether the broker holds a permission of the successor on the vhost, read again as a lagging node asks. */
export function permissionCheck(
  client: ManagementClient,
  login: SuccessorLogin,
  timeoutMs: number,
  retry: HashReads = defaultReads,
): Promise<SwitchCheck> {
  const what = `user "${login.username}" on vhost "${login.resource}"`;
  return readAgain(timeoutMs, retry, async (signal) => {
    try {
      await client.get(apiPath("permissions", login.resource, login.username), PermissionSchema, { signal });
      return { check: { accepted: true }, final: true };
    } catch (error) {
      if (error instanceof ManagementNotFoundError) {
        return { check: refused(`the broker holds no permission of ${what}`), final: false };
      }
      const failure = brokerFailure(error);
      if (failure === undefined) throw error;
      return {
        check: refused(
          `the check of the permission of ${what} on the broker's management API failed (${failure})`,
        ),
        final: true,
      };
    }
  });
}

const PermissionSchema = z.object({ configure: z.string().optional() });

/** Reads until an answer is final, the reads are used up or the deadline leaves no room for a gap. */
async function readAgain(
  timeoutMs: number,
  retry: HashReads,
  once: (signal: AbortSignal) => Promise<{ check: SwitchCheck; final: boolean }>,
): Promise<SwitchCheck> {
  const signal = AbortSignal.timeout(timeoutMs);
  const deadline = performance.now() + timeoutMs;
  for (let read = 1; ; read++) {
    const answer = await once(signal);
    const last = read >= retry.reads || performance.now() + retry.gapMs >= deadline;
    if (answer.final || last) return answer.check;
    await new Promise((resolve) => setTimeout(resolve, retry.gapMs));
  }
}

/** One read; `final` unless the answer may be a lagging node's. */
async function readOnce(
  client: ManagementClient,
  login: SuccessorLogin,
  signal: AbortSignal,
): Promise<{ check: SwitchCheck; final: boolean }> {
  const who = `user "${login.username}"`;
  let user: z.infer<typeof UserSchema>;
  try {
    user = await client.get(apiPath("users", login.username), UserSchema, { signal });
  } catch (error) {
    if (error instanceof ManagementNotFoundError) {
      return { check: refused(`the broker holds no ${who}`), final: false };
    }
    const failure = brokerFailure(error);
    if (failure === undefined) throw error;
    return {
      check: refused(`the check of ${who} on the broker's management API failed (${failure})`),
      final: true,
    };
  }
  if (verifyPassword(login.password, user.password_hash ?? "", user.hashing_algorithm ?? "")) {
    return { check: { accepted: true }, final: true };
  }
  return { check: refused(`the broker holds another password for ${who}`), final: false };
}

const refused = (reason: string): SwitchCheck => ({ accepted: false, reason });
