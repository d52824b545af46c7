// The promise that the order works on the upstream RabbitMQ Messaging Topology Operator as well as on
// the built-in controller: vhost-broker runs with `--topology-controller=false` while upstream's operator
// (v1.20.1, built into the cache on first use) serves the Vhost, User and Permission children on its own
// CRDs. The order's lifecycle (its five legs), then a rotation with a consumer that logs in again
// and again and is never refused.
import { expect, it } from "vitest";
import { userName } from "../src/orders/rabbitmq/naming.ts";
import { LoginProber } from "../harness/probes/login-prober.ts";
import { localNode } from "../harness/world/local-brokers.ts";
import { describeOrderLifecycle } from "./support/order-lifecycle.ts";
import {
  startUpstreamTopology,
  stopUpstreamTopology,
  upstreamBackendArgs,
  upstreamTopologyLog,
  upstreamTopologyStartTimeoutMs,
} from "../harness/world/upstream-topology.ts";
import {
  applyOrder,
  brokerApi,
  childNames,
  isReady,
  orderChildren,
  readSecret,
  waitForOrder,
} from "../harness/world/world.ts";

const ROTOR = "rotor";
/** The field manager of upstream's status writes (controller-runtime names it after the binary). */
const UPSTREAM_MANAGER = "messaging-topology-operator";

const backend = {
  operatorArgs: upstreamBackendArgs,
  up: startUpstreamTopology,
  down: stopUpstreamTopology,
  upTimeoutMs: upstreamTopologyStartTimeoutMs,
};

// The lifecycle on the 3.10 broker too: the two majors the upstream operator meets in the field.
const old = localNode("rabbitmq-2");
describeOrderLifecycle(`the order's lifecycle on the upstream topology operator, RabbitMQ ${old.version}`, {
  prefix: "upstream-r2",
  broker: old.broker,
  backend,
});

describeOrderLifecycle(
  `the order's lifecycle on the upstream topology operator, RabbitMQ ${localNode("rabbitmq").version}`,
  {
    prefix: "upstream",
    backend,
    more: ({ world, secrets }) => {
      it("has the children's status written by upstream's operator, not by the built-in controller", async () => {
        const w = world();
        await applyOrder(w, ROTOR, {
          rotation: { interval: "0s", gracePeriod: "5s" },
          deletionPolicy: "Delete",
        });
        await waitForOrder(w, ROTOR, `${ROTOR} Ready`, isReady, 90_000);
        for (const plural of ["vhosts", "users", "permissions"]) {
          const [child] = await orderChildren(w, ROTOR, plural);
          const stored = (await w.custom.getNamespacedCustomObject({
            group: "rabbitmq.com",
            version: "v1beta1",
            plural,
            namespace: w.cpNs,
            name: child?.metadata.name ?? "",
          })) as { metadata: { managedFields?: { manager?: string; subresource?: string }[] } };
          const statusWriters = stored.metadata.managedFields?.filter((f) => f.subresource === "status");
          expect(
            statusWriters?.map((f) => f.manager),
            plural,
          ).toEqual([UPSTREAM_MANAGER]);
        }
      }, 120_000);

      it("rotates with a consumer re-reading the Secret logging in every time, through the sweep", async () => {
        const w = world();
        const key = { cluster: "", namespace: w.tenantNs, name: ROTOR };
        const remember = async () => {
          const data = await readSecret(w, w.tenantNs, `${ROTOR}-credentials`);
          for (const k of ["password", "transport_url"]) if (data[k]) secrets.add(data[k]);
        };
        await remember();
        const prober = new LoginProber({
          core: w.cluster.core,
          namespace: w.tenantNs,
          order: ROTOR,
          intervalMs: 100,
          maxDurationMs: 100_000,
        }).start();
        try {
          // Logins as generation 1 first, then a raised passwordGeneration rotates at once; the superseded
          // user goes after 5 s of grace.
          await new Promise((r) => setTimeout(r, 2_000));
          await applyOrder(w, ROTOR, {
            rotation: { interval: "0s", gracePeriod: "5s" },
            deletionPolicy: "Delete",
            passwordGeneration: 2,
          });
          const swept = await waitForOrder(
            w,
            ROTOR,
            "generation 2 delivered and generation 1 swept",
            (o) => o?.status?.passwordGeneration === 2 && o.status.previousPasswordGeneration === undefined,
            90_000,
          );
          expect(isReady(swept)).toBe(true);
          await remember();
          expect(await childNames(w, ROTOR, "users")).toHaveLength(1);
          const gone = await brokerApi(w, "GET", `/api/users/${encodeURIComponent(userName(key, 1))}`);
          await gone.arrayBuffer();
          expect(gone.status).toBe(404);
          // A few more logins with only generation 2 on the broker.
          await new Promise((r) => setTimeout(r, 2_000));
        } finally {
          await prober.stop();
          console.log(prober.summary());
        }
        const counts = prober.snapshot();
        expect(counts.failureMessages).toEqual([]);
        expect(counts.authFailures).toBe(0);
        expect(counts.otherFailures).toBe(0);
        expect(counts.successes).toBe(counts.attempts);
        expect(counts.attempts).toBeGreaterThan(20);
        // The consumer moved from generation 1 to generation 2 and ended on it.
        expect(Object.keys(counts.successesByUser)).toEqual([1, 2].map((g) => userName(key, g)));
      }, 120_000);

      it("writes no password, token or transport URL into upstream's log either", () => {
        const log = upstreamTopologyLog();
        expect(log).toContain(ROTOR);
        for (const secret of secrets) {
          for (const form of [secret, encodeURIComponent(secret)]) {
            expect(log.includes(form), "a secret in upstream's log").toBe(false);
          }
        }
      });
    },
  },
);
