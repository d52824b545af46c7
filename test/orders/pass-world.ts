// The world the whole-pass tests of the orders run in (test/orders/rabbitmq-passes/ and
// test/orders/mariadb-passes/): the fake Kubernetes port on a fake clock, an in-memory credential
// store, the events and successor logins the passes made, and the order deps over them. freshWorld()
// makes it anew before each test; the exports are live bindings, so a test always reads the current one.
import type { OrderDeps, OrderEvent } from "../../src/orders/core/deps.ts";
import type { SuccessorLogin } from "../../src/orders/core/kind.ts";
import { SuccessorBackoff } from "../../src/orders/core/requeue.ts";
import type { Kind } from "../../src/runtime/port/kube-rest.ts";
import { FakeClock } from "../../harness/fakes/fake-clock.ts";
import { FakeKube } from "../../harness/fakes/fake-kube.ts";
import { MemoryStore } from "../../harness/fakes/memory-store.ts";

export const TENANT = "tenant-a";
export const CP_NS = "openstack";
export const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");
export const unb64 = (s: string | undefined) => Buffer.from(s ?? "", "base64").toString("utf8");

export let clock: FakeClock;
export let kube: FakeKube;
export let store: MemoryStore;
export let events: OrderEvent[];
export let checks: SuccessorLogin[];
export let deps: OrderDeps;
/** Every requeue a pass asked for in the test, to check the floors. */
export let requeues: number[];
let accept: boolean;

/** Whether the server accepts the successor's login from now on (it does in a fresh world). */
export function acceptSuccessor(accepted: boolean): void {
  accept = accepted;
}

/** A fresh world; `refusal` is the server's reason when it refuses a successor's login. */
export function freshWorld(refusal: (login: SuccessorLogin) => string): void {
  clock = new FakeClock(Date.parse("2030-01-01T00:00:00Z"));
  kube = new FakeKube({ now: () => new Date(clock.now()) });
  store = new MemoryStore();
  events = [];
  checks = [];
  accept = true;
  requeues = [];
  deps = {
    management: kube,
    home: kube,
    store,
    clock,
    log: { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined },
    events: { emit: (_target, event) => void events.push(event) },
    settings: { brokerCheckTimeoutMs: 1_000, transientCapMs: 30_000, sweepHoldMs: 60_000 },
    backoff: new SuccessorBackoff(),
    connections: async () => ({ known: true, count: 0 }),
    strayAccounts: async () => ({ removed: [] }),
    successorCheck: async (login) => {
      checks.push(login);
      return accept ? { accepted: true } : { accepted: false, reason: refusal(login) };
    },
  };
}

/**
 * The order `name` of `kind` in the tenant's namespace, on the ControlPlane "cp": generation 1, rotated
 * every 3 minutes with a minute's grace, Retain; `spec` overrides any of them.
 */
export function putOrder(kind: Kind, name: string, spec: Record<string, unknown>): void {
  kube.put(kind, {
    metadata: { name, namespace: TENANT },
    spec: {
      controlPlaneRef: { name: "cp", namespace: CP_NS },
      passwordGeneration: 1,
      rotation: { interval: "3m", gracePeriod: "1m" },
      deletionPolicy: "Retain",
      ...spec,
    },
  });
}

/** The names of the objects of `kind`, sorted. */
export const names = (kind: Kind) =>
  kube
    .all(kind)
    .map((o) => o.metadata?.name ?? "")
    .sort();
