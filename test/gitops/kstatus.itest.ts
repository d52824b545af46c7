// What Flux's health checks and cli-utils' `apply --wait` read of an order: kstatus
// (sigs.k8s.io/cli-utils/pkg/kstatus/status, tools/kstatus built from the Go module proxy) on real
// RabbitMQVhost and MariaDBDatabase orders read from the API server in every state. kstatus has no rules
// of its own for the kinds: it reads metadata.deletionTimestamp, status.observedGeneration against
// metadata.generation, the Reconciling and Stalled conditions (abnormal-true), and then Ready.
//
// The operator writes Reconciling and Stalled beside Ready (src/orders/core/health.ts), so that a
// rotation spec.passwordGeneration asks for reads InProgress until the Secret carries it, and an order
// that needs a person reads Failed; and the CRDs default a new order's status to observedGeneration 0,
// so that an order the operator has not reported on reads InProgress, not Current (docs/gitops.md).
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localEnv } from "../../harness/world/env.ts";
import { KIND_NAMES, OrderStates, type KindName, type StateName } from "./order-states.ts";
import { goTool, kstatus, type Kstatus } from "./tools.ts";

const run = promisify(execFile);
const states = new OrderStates();
let binary = "";

beforeAll(async () => {
  // The build (about 30 s on a cold module cache) overlaps the set-up.
  const built = goTool("kstatus");
  await states.setUp("kstatus");
  await states.capture();
  binary = await built;
}, 600_000);

afterAll(async () => {
  await states.tearDown();
}, 300_000);

const read = async (kind: KindName, state: StateName): Promise<Kstatus> => {
  const [result] = await kstatus(binary, [states.object(kind, state)]);
  if (!result) throw new Error("kstatus printed nothing");
  return result;
};

describe.each(KIND_NAMES)("kstatus of a %s", (kind) => {
  const resource = kind === "RabbitMQVhost" ? "VhostReady" : "DatabaseReady";

  it("reads a Ready order as Current", async () => {
    expect(await read(kind, "ready")).toMatchObject({ status: "Current", message: "Resource is Ready" });
    // Also in the grace period after a rotation, when the Secret carries the new generation.
    expect((await read(kind, "grace")).status).toBe("Current");
  });

  it("reads an order that waits for its backend as InProgress, with Ready's reason and message", async () => {
    const result = await read(kind, "provisioning");
    expect(result.status).toBe("InProgress");
    expect(result.message).toMatch(new RegExp(`^${resource} is False \\(Waiting`));
    expect(result.conditions).toEqual([
      { type: "Reconciling", status: "True", reason: "NotAllReady", message: result.message },
    ]);
  });

  it("reads an order whose new spec the operator has not seen as InProgress (observedGeneration behind)", async () => {
    const object = states.object(kind, "rotation-requested");
    expect(object.metadata.generation).toBe(2);
    expect(object.status?.observedGeneration).toBe(1);
    expect(await read(kind, "rotation-requested")).toMatchObject({
      status: "InProgress",
      message: `${kind} generation is 2, but latest observed generation is 1`,
      conditions: [expect.objectContaining({ type: "Reconciling", reason: "LatestGenerationNotObserved" })],
    });
  });

  it("reads an order being deleted as Terminating", async () => {
    expect(await read(kind, "deleting")).toMatchObject({
      status: "Terminating",
      message: "Resource scheduled for deletion",
    });
  });

  it("reads an order the operator has not reported on as InProgress: its status defaults to observedGeneration 0", async () => {
    expect(states.object(kind, "new").status).toEqual({ observedGeneration: 0 });
    expect(await read(kind, "new")).toMatchObject({
      status: "InProgress",
      message: `${kind} generation is 1, but latest observed generation is 0`,
    });
  });

  it("reads a rotation spec.passwordGeneration asks for as InProgress until the Secret carries it", async () => {
    // The pass recorded generation 2 as observed, and Ready stays True while the successor is made:
    // Reconciling says that the delivered Secret still carries generation 1.
    const object = states.object(kind, "rotating");
    expect(object.metadata.generation).toBe(2);
    expect(object.status?.observedGeneration).toBe(2);
    expect(object.status?.passwordGeneration).toBe(1);
    expect(object.spec["passwordGeneration"]).toBe(2);
    const message =
      "spec.passwordGeneration asks for generation 2; the delivered Secret carries generation 1";
    expect(await read(kind, "rotating")).toMatchObject({
      status: "InProgress",
      message,
      conditions: [{ type: "Reconciling", status: "True", reason: "RotationInProgress", message }],
    });
  });

  it("reads a rotation held by a grace period as InProgress too", async () => {
    // spec.passwordGeneration 3 during generation 1's grace period: the rotation starts once 1 is swept.
    const object = states.object(kind, "rotation-held");
    expect(object.status).toMatchObject({
      observedGeneration: 3,
      passwordGeneration: 2,
      previousPasswordGeneration: 1,
    });
    expect(await read(kind, "rotation-held")).toMatchObject({
      status: "InProgress",
      message: "spec.passwordGeneration asks for generation 3; the delivered Secret carries generation 2",
    });
  });

  const failed = kind === "RabbitMQVhost" ? "VhostFailed" : "DatabaseFailed";
  const notDeclared = kind === "RabbitMQVhost" ? "MessagingNotDeclared" : "DatabaseNotDeclared";
  it.each<[StateName, string, string]>([
    ["rejected", resource, "GatekeeperRejected"],
    ["controlplane-missing", resource, "ControlPlaneNotFound"],
    ["unassigned", resource, "NamespaceNotAssigned"],
    ["not-declared", resource, notDeclared],
    ["refused", resource, failed],
  ])(
    "reads an order that needs a person (%s) as Failed, with the condition that says why",
    async (state, type, reason) => {
      const result = await read(kind, state);
      const cause = states.object(kind, state).status?.conditions?.find((c) => c.type === type);
      const message = `${type} is False (${reason}): ${cause?.message ?? ""}`;
      expect(result).toMatchObject({ status: "Failed", message });
      expect(result.conditions).toEqual([{ type: "Stalled", status: "True", reason, message }]);
    },
  );
});

it("reads the orders of a namespace as `kubectl get -o json` lists them", async () => {
  const env = localEnv();
  const { stdout } = await run(env.KUBECTL, [
    `--kubeconfig=${env.KUBECONFIG}`,
    "get",
    "rabbitmqvhosts,mariadbdatabases",
    "-n",
    states.tenantNs,
    "-o",
    "json",
  ]);
  const results = await kstatus(binary, [JSON.parse(stdout)]);
  const byName = new Map(results.map((r) => [`${r.kind}/${r.name}`, r.status]));
  // The rotated orders were left with generation 3 asked for during generation 1's grace period, so
  // they read InProgress; the others were deleted or changed since they were captured, and only their
  // kind and name are checked.
  expect(byName.get("RabbitMQVhost/r-rotated")).toBe("InProgress");
  expect(byName.get("MariaDBDatabase/m-rotated")).toBe("InProgress");
  expect(byName.get("RabbitMQVhost/r-fresh")).toBeDefined();
  expect(results.every((r) => r.namespace === states.tenantNs)).toBe(true);
});
