// Which pods still run with a superseded credential: those that read the delivered Secret in any way and
// were created before the switch; and how the sweep weighs them and the backend's login records.
import { describe, expect, it } from "vitest";
import { at, gen, input } from "../../../harness/fakes/generation-fixtures.ts";
import type { KubeObject } from "../../runtime/port/kube-rest.ts";
import { planGenerations, type RotationStatus } from "./generations.ts";
import { podsBeforeSwitch, readsSecret } from "./workloads.ts";

const SECRET = "svc-credentials";
const pod = (
  name: string,
  created: number,
  spec: Record<string, unknown>,
  extra: object = {},
): KubeObject => ({
  metadata: { namespace: "tenant", name, creationTimestamp: at(created), ...extra },
  spec,
});
const env = (name: string) => ({
  containers: [{ env: [{ valueFrom: { secretKeyRef: { name, key: "k" } } }] }],
});

describe("readsSecret", () => {
  it("finds the Secret in a volume, a projected volume, env, envFrom and an init container", () => {
    expect(readsSecret(pod("a", 0, { volumes: [{ secret: { secretName: SECRET } }] }), SECRET)).toBe(true);
    expect(
      readsSecret(
        pod("b", 0, { volumes: [{ projected: { sources: [{ secret: { name: SECRET } }] } }] }),
        SECRET,
      ),
    ).toBe(true);
    expect(readsSecret(pod("c", 0, env(SECRET)), SECRET)).toBe(true);
    expect(
      readsSecret(pod("d", 0, { containers: [{ envFrom: [{ secretRef: { name: SECRET } }] }] }), SECRET),
    ).toBe(true);
    expect(readsSecret(pod("e", 0, { initContainers: env(SECRET).containers }), SECRET)).toBe(true);
  });

  it("ignores other Secrets and pods without a spec", () => {
    expect(readsSecret(pod("a", 0, env("other-credentials")), SECRET)).toBe(false);
    expect(readsSecret({ metadata: { name: "bare" } }, SECRET)).toBe(false);
  });
});

describe("podsBeforeSwitch", () => {
  it("names the running readers created before the switch, its own second included", () => {
    const pods = [
      pod("old", 10, env(SECRET)),
      pod("same-second", 60, env(SECRET)),
      pod("new", 61, env(SECRET)),
      pod("other", 10, env("other-credentials")),
      pod("leaving", 10, env(SECRET), { deletionTimestamp: at(70) }),
      { ...pod("done", 10, env(SECRET)), status: { phase: "Succeeded" } },
    ];
    expect(podsBeforeSwitch(pods, SECRET, at(60))).toEqual(["tenant/old", "tenant/same-second"]);
  });
});

describe("the sweep weighs logins since the switch and pods from before it", () => {
  const grace: RotationStatus = {
    passwordGeneration: 2,
    lastRotation: at(180),
    previousPasswordGeneration: 1,
    previousPasswordDeleteAt: at(240),
  };
  const idle = { known: true as const, count: 0 };
  const plan = (hold: object, now = 250) =>
    planGenerations(
      input({
        status: grace,
        children: [gen(1), gen(2)],
        sweepHold: { holdMs: 60_000, consumers: idle, ...hold },
      }),
      at(now),
    );

  it("holds while the superseded user logged in since the switch, and says so", () => {
    const held = plan({ loginsSinceSwitch: 2 });
    expect(held.actions).toEqual([]);
    expect(held.view.message).toContain(
      "is kept past its grace period while it logged in 2 times since the switch",
    );
  });

  it("holds while login records read at the switch cannot be read now", () => {
    const held = plan({ loginsSinceSwitch: { unknown: "the broker keeps no login records by user" } });
    expect(held.actions).toEqual([]);
    expect(held.view.message).toContain(
      "its login records cannot be read (the broker keeps no login records by user)",
    );
  });

  it("holds while a pod from before the switch reads the Secret, and names it", () => {
    const held = plan({ podsBeforeSwitch: ["tenant/api-7d9f-x2"] });
    expect(held.actions).toEqual([]);
    expect(held.view.message).toContain(
      "pod tenant/api-7d9f-x2, started before the switch, reads the delivered Secret",
    );
  });

  it("sweeps with no login since the switch and no old pod, and at the hold's end whatever they say", () => {
    expect(plan({ loginsSinceSwitch: 0, podsBeforeSwitch: [] }).actions.length).toBeGreaterThan(0);
    expect(
      plan({ loginsSinceSwitch: 5, podsBeforeSwitch: ["tenant/p"] }, 300).actions.length,
    ).toBeGreaterThan(0);
  });
});
