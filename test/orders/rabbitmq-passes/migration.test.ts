// A RabbitMQVhost moved to another RabbitmqCluster in whole passes on the fake port: the decisions at the
// faults of a migration (the new bus not usable, the old one gone or not usable at the sweep). The move
// itself, with real brokers and two replicas, is e2e/bus-migration.itest.ts.
import { beforeEach, describe, expect, it } from "vitest";
import {
  controlPlaneKind,
  rabbitmqClusterKind,
  secretKind,
  userKind,
  vhostKind,
} from "../../../src/api/index.ts";
import { CP_NS, b64, clock, deps, kube, names } from "../pass-world.ts";
import {
  condition,
  converge,
  deliveredUser,
  delivered,
  pass,
  setUp,
  status,
  topology,
  world,
} from "./fixture.ts";

beforeEach(setUp);

/** A second RabbitmqCluster `name` with its default-user Secret. */
function putBus(name: string, ready = true): void {
  kube.put(rabbitmqClusterKind, {
    metadata: { name, namespace: CP_NS },
    spec: { replicas: 1 },
    status: {
      defaultUser: { secretReference: { name: `${name}-default-user` } },
      conditions: [{ type: "AllReplicasReady", status: ready ? "True" : "False" }],
    },
  });
  kube.put(secretKind, {
    metadata: { name: `${name}-default-user`, namespace: CP_NS },
    data: {
      username: b64("admin"),
      password: b64("admin-pw"),
      host: b64(`${name}.${CP_NS}.svc`),
      port: b64("5672"),
    },
  });
}

function pointBusAt(name: string): void {
  const cp = kube.read(controlPlaneKind, CP_NS, "cp");
  const spec = cp?.["spec"] as Record<string, unknown>;
  kube.put(controlPlaneKind, {
    ...cp,
    spec: { ...spec, infrastructure: { messaging: { clusterRef: { name } } } },
  });
}

const host = () =>
  Buffer.from((delivered()?.["data"] as Record<string, string>)["host"] ?? "", "base64").toString();

/** Passes with the topology operator's part between them until the order is delivered on `bus`. */
async function switchTo(bus: string): Promise<void> {
  for (let i = 0; i < 6 && status()["backend"] !== bus; i++) {
    await pass();
    topology();
  }
  expect(status()["backend"]).toBe(bus);
}

describe("a RabbitMQVhost whose ControlPlane names another RabbitmqCluster", () => {
  it("stays delivered on its broker while the new one is not Ready", async () => {
    world();
    await converge();
    putBus("rabbitmq-b", false);
    pointBusAt("rabbitmq-b");
    await pass();
    expect(host()).toBe(`rabbitmq.${CP_NS}.svc`);
    expect(deliveredUser()).toMatch(/-v1$/);
    expect(status()["backend"]).toBe("rabbitmq");
    // The bus gate stops the pass before anything is made on the new broker.
    expect(names(vhostKind)).toHaveLength(1);
    expect(condition("Ready")?.status).toBe("False");
  });

  it("sweeps at the grace period's end when the old RabbitmqCluster is gone: no one can use its users", async () => {
    world({ rotation: { gracePeriod: "1m" } });
    await converge();
    putBus("rabbitmq-b");
    pointBusAt("rabbitmq-b");
    await switchTo("rabbitmq-b");
    expect(host()).toBe(`rabbitmq-b.${CP_NS}.svc`);
    // The backend would say someone is connected; it is never asked, its RabbitmqCluster is gone.
    deps.connections = async () => ({ known: true, count: 1 });
    expect(names(userKind).filter((n) => n.endsWith("-v1"))).toHaveLength(1);
    kube.delete(rabbitmqClusterKind, { namespace: CP_NS, name: "rabbitmq" });
    clock.advance(60_000);
    await pass();
    topology();
    const v1 = names(userKind).find((n) => n.endsWith("-v1"));
    expect(
      v1 === undefined || kube.read(userKind, CP_NS, v1)?.metadata?.deletionTimestamp !== undefined,
    ).toBe(true);
  });

  it("holds the sweep while the old broker's users are in use, and while it cannot tell", async () => {
    world({ rotation: { gracePeriod: "1m" } });
    await converge();
    putBus("rabbitmq-b");
    pointBusAt("rabbitmq-b");
    await switchTo("rabbitmq-b");
    deps.connections = async () => ({ known: true, count: 1 });
    clock.advance(60_000);
    await pass();
    expect(condition("VhostReady")?.message).toContain("is kept past its grace period while 1 connection");
    // The old RabbitmqCluster's default-user Secret gone: the old broker cannot be asked.
    kube.delete(secretKind, { namespace: CP_NS, name: "rabbitmq-default-user" });
    clock.advance(10_000);
    await pass();
    expect(condition("VhostReady")?.message).toContain("cannot tell who uses it");
    expect(status()["migration"]).toEqual({ from: "rabbitmq", to: "rabbitmq-b", phase: "Draining" });
  });
});
