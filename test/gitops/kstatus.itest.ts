// What Flux's health checks and cli-utils' `apply --wait` read of an order: kstatus
// (sigs.k8s.io/cli-utils/pkg/kstatus/status, tools/kstatus built from the Go module proxy) on real
// RabbitMQVhost and MariaDBDatabase orders read from the API server in every state. kstatus has no rules
// of its own for the kinds: it reads metadata.deletionTimestamp, status.observedGeneration against
// metadata.generation, the Reconciling and Stalled conditions (abnormal-true), and then Ready.
//
// Three readings are wrong, and the tests below pin them so that a fix shows (docs/gitops.md):
// - an order the operator has not reported on yet has no status at all, which kstatus reads Current;
// - a rotation spec.passwordGeneration asks for reads Current from its first pass on, although the
//   Secret still carries the old generation: the pass records the new metadata.generation in
//   status.observedGeneration and Ready stays True (the old credential stays valid);
// - kstatus never reads Failed: the operator writes no Stalled condition, so an order that needs a
//   person (refused by the backend or a gatekeeper plugin, its ControlPlane missing or declaring no bus,
//   its namespace not assigned) reads InProgress, and a wait for it runs into its timeout.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localEnv } from "../support/env.ts";
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

  it("misreads an order the operator has not reported on as Current: it has no status yet", async () => {
    // Right would be InProgress. kstatus compares status.observedGeneration only when it is present, and
    // takes an object without any known condition as Current.
    expect(states.object(kind, "new").status).toBeUndefined();
    expect(await read(kind, "new")).toMatchObject({ status: "Current", message: "Resource is current" });
  });

  it("misreads a rotation spec.passwordGeneration asks for as Current from its first pass on", async () => {
    // Right would be InProgress until the Secret carries generation 2: the pass recorded generation 2 as
    // observed, and Ready stays True while the successor is being created.
    const object = states.object(kind, "rotating");
    expect(object.metadata.generation).toBe(2);
    expect(object.status?.observedGeneration).toBe(2);
    expect(object.status?.passwordGeneration).toBe(1);
    expect(object.spec["passwordGeneration"]).toBe(2);
    expect((await read(kind, "rotating")).status).toBe("Current");
  });

  it("misreads a rotation held by a grace period as Current too", async () => {
    // spec.passwordGeneration 3 during generation 1's grace period: the rotation starts once 1 is swept.
    const object = states.object(kind, "rotation-held");
    expect(object.status).toMatchObject({
      observedGeneration: 3,
      passwordGeneration: 2,
      previousPasswordGeneration: 1,
    });
    expect((await read(kind, "rotation-held")).status).toBe("Current");
  });

  it.each<[StateName, string]>([
    ["rejected", "GatekeeperRejected"],
    ["controlplane-missing", "NotAllReady"],
    ["unassigned", "NotAllReady"],
    ["not-declared", "NotAllReady"],
    ["refused", "NotAllReady"],
  ])(
    "reads an order that needs a person (%s) as InProgress, never Failed: no Stalled condition",
    async (state, readyReason) => {
      const result = await read(kind, state);
      expect(result.status).toBe("InProgress");
      expect(result.conditions).toEqual([
        { type: "Reconciling", status: "True", reason: readyReason, message: result.message },
      ]);
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
  // The orders the file drove to Ready and left there, and one it rotated; the others were deleted
  // or changed since they were captured, and only their kind and name are checked.
  expect(byName.get("RabbitMQVhost/r-rotated")).toBe("Current");
  expect(byName.get("MariaDBDatabase/m-rotated")).toBe("Current");
  expect(byName.get("RabbitMQVhost/r-fresh")).toBeDefined();
  expect(results.every((r) => r.namespace === states.tenantNs)).toBe(true);
});
