// Drives the order reconciler pass after pass for the end-to-end tests, the way the runtime's work queue
// will: a pass, the topology stand-in's round, then a wait of the requested requeue (capped, so that a
// test does not sleep through a 10-minute requeue). Logs go to a buffer the tests search for secrets.
import { Writable } from "node:stream";
import * as k8s from "@kubernetes/client-node";
import { pino } from "pino";
import { openBaoStore } from "../../src/backup/openbao.ts";
import type { OrderDeps, OrderEvent } from "../../src/orders/core/deps.ts";
import { reconcileOrder } from "../../src/orders/core/reconcile.ts";
import { SuccessorBackoff } from "../../src/orders/core/requeue.ts";
import { rabbitMQVhostOrder } from "../../src/orders/rabbitmq/kind.ts";
import { TerminalError, TransientError } from "../../src/runtime/base/errors.ts";
import { realClock } from "../../src/runtime/base/clock.ts";
import { KubeRest } from "../../src/runtime/port/kube-rest.ts";
import { RestKube } from "../../src/runtime/port/rest-kube.ts";
import type { RabbitMQVhost } from "../../src/api/index.ts";
import { localEnv } from "../world/env.ts";
import type { TestCluster } from "../world/kube.ts";
import type { TopologyStandIn } from "../world/topology-stand-in.ts";

/** What acts on the children after each pass, in place of a topology operator. */
export interface AfterPass {
  step(): Promise<void>;
}

export class OrderDriver<S extends AfterPass = TopologyStandIn> {
  readonly logs: string[] = [];
  readonly events: OrderEvent[] = [];
  readonly errors: string[] = [];
  readonly deps: OrderDeps;
  private readonly custom: k8s.CustomObjectsApi;
  readonly standIn: S;

  constructor(cluster: TestCluster, standIn: S) {
    const env = localEnv();
    const sink = new Writable({
      write: (chunk: Buffer, _enc, done) => {
        this.logs.push(chunk.toString("utf8"));
        done();
      },
    });
    this.standIn = standIn;
    this.custom = cluster.config.makeApiClient(k8s.CustomObjectsApi);
    // No caches: every read is a live one, so a pass sees what the previous one wrote.
    const kube = new RestKube(new KubeRest(cluster.kubeconfig));
    this.deps = {
      management: kube,
      home: kube,
      store: openBaoStore({
        address: env.BAO_ADDR,
        auth: { method: "token", token: env.BAO_TOKEN },
        mount: "kv-v2",
        timeoutMs: 5_000,
      }),
      clock: realClock,
      log: pino({ level: "debug" }, sink),
      events: { emit: (_target, event) => void this.events.push(event) },
      settings: { brokerCheckTimeoutMs: 10_000, transientCapMs: 30_000, sweepHoldMs: 60_000 },
      backoff: new SuccessorBackoff(),
    };
  }

  async order(namespace: string, name: string): Promise<RabbitMQVhost | undefined> {
    try {
      return (await this.custom.getNamespacedCustomObject({
        group: "c5c3.io",
        version: "v1alpha1",
        plural: "rabbitmqvhosts",
        namespace,
        name,
      })) as RabbitMQVhost;
    } catch (error) {
      if (error instanceof k8s.ApiException && error.code === 404) return undefined;
      throw error;
    }
  }

  /**
   * Runs passes until `done` holds for the order as read after a pass (undefined once it is gone), or
   * fails after `timeoutMs` naming what it waited for and the last conditions.
   */
  async until(
    namespace: string,
    name: string,
    what: string,
    done: (order: RabbitMQVhost | undefined) => boolean,
    timeoutMs = 60_000,
    capMs = 500,
  ): Promise<RabbitMQVhost | undefined> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      let wait = capMs;
      try {
        const result = await reconcileOrder(rabbitMQVhostOrder(), this.deps, "", namespace, name);
        wait = Math.min(result.requeueAfterMs ?? capMs, capMs);
      } catch (error) {
        if (!(error instanceof TransientError) && !(error instanceof TerminalError)) throw error;
        this.errors.push(error.message);
      }
      await this.standIn.step();
      const order = await this.order(namespace, name);
      if (done(order)) return order;
      if (Date.now() > deadline) {
        const conditions = JSON.stringify(
          order?.status?.conditions?.map((c) => [c.type, c.reason, c.message]),
        );
        throw new Error(
          `timed out waiting for ${what}; conditions: ${conditions}; errors: ${this.errors.slice(-3).join(" | ")}`,
        );
      }
      await new Promise((r) => setTimeout(r, wait));
    }
  }
}

export function condition(order: RabbitMQVhost | undefined, type: string) {
  return order?.status?.conditions?.find((c) => c.type === type);
}

export const isReady = (o: RabbitMQVhost | undefined): boolean => condition(o, "Ready")?.status === "True";
