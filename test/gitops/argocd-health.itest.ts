// The Argo CD health check of the c5c3.io orders (deploy/vhost-broker/files/argocd-health.lua) on real
// RabbitMQVhost and MariaDBDatabase orders read from the API server in every state, in two Lua 5.1
// interpreters: gopher-lua as Argo CD runs a check from argocd-cm (tools/argocd-health: base and table
// libraries only, the object decoded as Argo CD decodes it), and Debian's lua5.1 with the same libraries.
// Both must say the same. Then every reason the operator writes, on a Ready order turned False with it:
// Degraded exactly for the reasons the operator emits a Warning event for (they need a person).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GATEKEEPER_REJECTED } from "../../src/gatekeeper/gatekeeper.ts";
import type { OrderKind, Backend } from "../../src/orders/core/kind.ts";
import { transitionEvents } from "../../src/orders/core/status.ts";
import { Reason as MariaDBReason } from "../../src/orders/mariadb/conditions.ts";
import { mariaDBDatabaseOrder } from "../../src/orders/mariadb/kind.ts";
import { Reason as RabbitMQReason } from "../../src/orders/rabbitmq/conditions.ts";
import { rabbitMQVhostOrder } from "../../src/orders/rabbitmq/kind.ts";
import {
  KIND_NAMES,
  OrderStates,
  STATES,
  type KindName,
  type OrderObject,
  type StateName,
} from "./order-states.ts";
import { argoHealth, goTool, lua51, lua51Health, type Health } from "./tools.ts";

const states = new OrderStates();
let gopher = "";
let lua = "";

beforeAll(async () => {
  const built = goTool("argocd-health");
  lua = lua51();
  await states.setUp("argocd");
  await states.capture();
  gopher = await built;
}, 600_000);

afterAll(async () => {
  await states.tearDown();
}, 300_000);

/** The check's answer, the same in both interpreters. */
async function health(object: unknown): Promise<Health> {
  const [inArgo, in51] = await Promise.all([argoHealth(gopher, object), lua51Health(lua, object)]);
  expect(in51, "Debian's Lua 5.1 says what gopher-lua says").toEqual(inArgo);
  return inArgo;
}

const of = (kind: KindName, state: StateName) => health(states.object(kind, state));
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

describe.each(KIND_NAMES)("Argo CD health of a %s", (kind) => {
  const resource = kind === "RabbitMQVhost" ? "VhostReady" : "DatabaseReady";
  const thing = kind === "RabbitMQVhost" ? "vhost" : "database";

  it("has an answer for every state", async () => {
    for (const state of STATES) {
      const answer = await of(kind, state);
      expect(["Healthy", "Progressing", "Degraded"], state).toContain(answer.status);
      expect(answer.message, state).not.toBe("");
    }
  });

  it("is Healthy when Ready, with Ready's message", async () => {
    expect(await of(kind, "ready")).toEqual({
      status: "Healthy",
      message: `the ${thing} is provisioned and its credentials are delivered`,
    });
  });

  it("is Healthy in a rotation's grace period, saying until when the old generation stays valid", async () => {
    const object = states.object(kind, "grace");
    const until = object.status?.["previousPasswordDeleteAt"] as string;
    expect(until).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(await of(kind, "grace")).toEqual({
      status: "Healthy",
      message: `the ${thing} is provisioned and its credentials are delivered; password generation 1 stays valid until ${until}`,
    });
  });

  it("is Progressing before the operator reports on the order", async () => {
    expect(await of(kind, "new")).toEqual({
      status: "Progressing",
      message: "waiting for vhost-broker to report on the order",
    });
  });

  it("is Progressing while the backend provisions, naming what the order waits for", async () => {
    const answer = await of(kind, "provisioning");
    expect(answer.status).toBe("Progressing");
    expect(answer.message).toMatch(
      new RegExp(`^${resource} Waiting\\w+: waiting for the (topology|SQL) operator`),
    );
  });

  it("is Progressing while a new spec is not reported on, and while the rotation it asks for runs", async () => {
    expect(await of(kind, "rotation-requested")).toEqual({
      status: "Progressing",
      message: "vhost-broker has not reported on generation 2 of the order yet (it reported on 1)",
    });
    // Ready is True all along (the old credential stays valid); the check reads the spec's generation.
    expect(await of(kind, "rotating")).toEqual({
      status: "Progressing",
      message:
        "rotating to password generation 2 (spec.passwordGeneration); the Secret carries generation 1 until then, which stays valid",
    });
    // Raised again during the grace period that rotation started: it waits for the sweep.
    const held = states.object(kind, "rotation-held");
    expect(await of(kind, "rotation-held")).toEqual({
      status: "Progressing",
      message: `rotating to password generation 3 (spec.passwordGeneration) once password generation 1 is swept after its grace period, at ${String(held.status?.["previousPasswordDeleteAt"])}; the Secret carries generation 2 until then, which stays valid`,
    });
  });

  it("is Progressing while it is deleted, with the teardown step that holds it", async () => {
    const ready = states.object(kind, "deleting").status?.conditions?.find((c) => c.type === "Ready");
    expect(ready?.reason).toBe("Deleting");
    expect(await of(kind, "deleting")).toEqual({
      status: "Progressing",
      message: `the order is being deleted: ${ready?.message}`,
    });
  });

  it.each<[StateName, RegExp]>([
    [
      "rejected",
      /^Ready GatekeeperRejected: gatekeeper plugin "maintenance-freeze" rejected this \w+: no new orders/,
    ],
    ["controlplane-missing", /^RESOURCE ControlPlaneNotFound: ControlPlane [\w-]+\/missing not found/],
    ["unassigned", /^RESOURCE NamespaceNotAssigned: ControlPlane [\w-]+\/cp assigns no namespace/],
    ["not-declared", /^RESOURCE (Messaging|Database)NotDeclared: ControlPlane [\w-]+\/bare declares no/],
    ["refused", /^RESOURCE (VhostFailed|DatabaseFailed): the (topology|SQL) operator cannot create/],
  ])("is Degraded when it needs a person (%s), saying why", async (state, pattern) => {
    const answer = await of(kind, state);
    expect(answer.status).toBe("Degraded");
    expect(answer.message).toMatch(new RegExp(pattern.source.replace("RESOURCE", escape(resource))));
  });
});

describe("every reason the operator writes", () => {
  const kinds: Record<KindName, { kind: OrderKind<Backend>; reasons: Record<string, string> }> = {
    RabbitMQVhost: { kind: rabbitMQVhostOrder() as OrderKind<Backend>, reasons: RabbitMQReason },
    MariaDBDatabase: {
      kind: mariaDBDatabaseOrder() as unknown as OrderKind<Backend>,
      reasons: MariaDBReason,
    },
  };
  /** The reasons of a True condition and of the aggregate, which never stand for a sub-condition that is False. */
  const notFalse = new Set([
    "AllReady",
    "NotAllReady",
    "Delivered",
    "VhostProvisioned",
    "DatabaseProvisioned",
  ]);

  it.each(KIND_NAMES)("%s: Degraded exactly for the reasons with a Warning event", async (name) => {
    const { kind, reasons } = kinds[name];
    const shape = {
      resourceCondition: kind.resourceCondition,
      resourceStatusField: kind.resourceStatusField,
      deliveredKeys: kind.deliveredKeys,
      allReady: kind.messages.allReady(),
      backendKind: kind.backendKind,
      eventTypes: kind.eventTypes,
    };
    const ready = states.object(name, "ready");
    const all = [...Object.values(reasons), GATEKEEPER_REJECTED].filter((r) => !notFalse.has(r));
    expect(all.length).toBeGreaterThan(15);
    for (const reason of all) {
      const failing = { type: kind.resourceCondition, status: "False", reason, message: `a ${reason}` };
      const event = transitionEvents(shape, undefined, { conditions: [failing] } as never)[0];
      const expected = event?.type === "Warning" ? "Degraded" : "Progressing";
      const object: OrderObject = structuredClone(ready);
      object.status = {
        ...object.status,
        conditions: (object.status?.conditions ?? []).map((c) =>
          c.type === kind.resourceCondition
            ? { ...c, ...failing }
            : c.type === "Ready"
              ? {
                  ...c,
                  status: "False",
                  reason: "NotAllReady",
                  message: `${kind.resourceCondition} is False (${reason})`,
                }
              : c,
        ),
      };
      expect(await health(object), reason).toEqual({
        status: expected,
        message: `${kind.resourceCondition} ${reason}: a ${reason}`,
      });
    }
  });
});
